-- AlterTable
ALTER TABLE "sessions" ADD COLUMN     "checkpoint_retention" TEXT,
ADD COLUMN     "ended_at" TIMESTAMP(3),
ADD COLUMN     "expires_at" TIMESTAMP(3),
ADD COLUMN     "last_activity_at" TIMESTAMP(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
ADD COLUMN     "system_prompt" TEXT,
ADD COLUMN     "task" TEXT;

-- Existing sessions were last active when they were last updated.
UPDATE "sessions" SET "last_activity_at" = "updated_at";
-- Sessions already completed or failed ended at their last update.
UPDATE "sessions" SET "ended_at" = "updated_at" WHERE "status" IN ('completed', 'failed');

-- CreateTable
CREATE TABLE "session_activity" (
    "id" SERIAL NOT NULL,
    "session_id" TEXT NOT NULL,
    "type" TEXT NOT NULL,
    "action" TEXT,
    "version_before" INTEGER,
    "version_after" INTEGER,
    "status_before" TEXT,
    "status_after" TEXT,
    "error_code" TEXT,
    "detail" TEXT NOT NULL DEFAULT '{}',
    "created_at" TIMESTAMP(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "session_activity_pkey" PRIMARY KEY ("id")
);

-- CreateIndex
CREATE INDEX "session_activity_session_id_id_idx" ON "session_activity"("session_id", "id");

-- CreateIndex
CREATE INDEX "sessions_status_last_activity_at_idx" ON "sessions"("status", "last_activity_at");

-- CreateIndex
CREATE INDEX "sessions_last_activity_at_idx" ON "sessions"("last_activity_at");

-- CreateIndex
CREATE INDEX "sessions_expires_at_idx" ON "sessions"("expires_at");

-- AddForeignKey
ALTER TABLE "session_activity" ADD CONSTRAINT "session_activity_session_id_fkey" FOREIGN KEY ("session_id") REFERENCES "sessions"("id") ON DELETE CASCADE ON UPDATE CASCADE;

