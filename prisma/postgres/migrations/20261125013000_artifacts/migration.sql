-- CreateTable
CREATE TABLE "artifacts" (
    "id" TEXT NOT NULL,
    "name" TEXT NOT NULL,
    "type" TEXT NOT NULL,
    "visibility" TEXT NOT NULL,
    "scope_key" TEXT NOT NULL,
    "name_owner" TEXT NOT NULL,
    "session_id" TEXT,
    "run_id" TEXT,
    "version" INTEGER NOT NULL,
    "content_type" TEXT NOT NULL,
    "encoding" TEXT NOT NULL,
    "size" INTEGER NOT NULL,
    "sha256" TEXT NOT NULL,
    "created_by" TEXT NOT NULL,
    "created_at" TIMESTAMP(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "updated_at" TIMESTAMP(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "artifacts_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "artifact_scopes" (
    "artifact_id" TEXT NOT NULL,
    "key" TEXT NOT NULL,
    "value" TEXT NOT NULL,

    CONSTRAINT "artifact_scopes_pkey" PRIMARY KEY ("artifact_id","key")
);

-- CreateTable
CREATE TABLE "artifact_metadata" (
    "artifact_id" TEXT NOT NULL,
    "key" TEXT NOT NULL,
    "value" TEXT NOT NULL,

    CONSTRAINT "artifact_metadata_pkey" PRIMARY KEY ("artifact_id","key")
);

-- CreateTable
CREATE TABLE "artifact_versions" (
    "artifact_id" TEXT NOT NULL,
    "version" INTEGER NOT NULL,
    "content" TEXT NOT NULL,
    "content_type" TEXT NOT NULL,
    "encoding" TEXT NOT NULL,
    "size" INTEGER NOT NULL,
    "sha256" TEXT NOT NULL,
    "created_by" TEXT NOT NULL,
    "created_at" TIMESTAMP(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "artifact_versions_pkey" PRIMARY KEY ("artifact_id","version")
);

-- CreateIndex
CREATE INDEX "artifacts_session_id_idx" ON "artifacts"("session_id");

-- CreateIndex
CREATE INDEX "artifacts_run_id_type_idx" ON "artifacts"("run_id", "type");

-- CreateIndex
CREATE INDEX "artifacts_updated_at_idx" ON "artifacts"("updated_at");

-- CreateIndex
CREATE UNIQUE INDEX "artifacts_scope_key_name_owner_name_key" ON "artifacts"("scope_key", "name_owner", "name");

-- CreateIndex
CREATE INDEX "artifact_scopes_key_value_idx" ON "artifact_scopes"("key", "value");

-- CreateIndex
CREATE INDEX "artifact_metadata_key_value_idx" ON "artifact_metadata"("key", "value");

-- AddForeignKey
ALTER TABLE "artifact_scopes" ADD CONSTRAINT "artifact_scopes_artifact_id_fkey" FOREIGN KEY ("artifact_id") REFERENCES "artifacts"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "artifact_metadata" ADD CONSTRAINT "artifact_metadata_artifact_id_fkey" FOREIGN KEY ("artifact_id") REFERENCES "artifacts"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "artifact_versions" ADD CONSTRAINT "artifact_versions_artifact_id_fkey" FOREIGN KEY ("artifact_id") REFERENCES "artifacts"("id") ON DELETE CASCADE ON UPDATE CASCADE;

