-- Assistants made through the LangGraph API, per tenant, and their versions (docs/langgraph-api.md)
-- CreateTable
CREATE TABLE "assistants" (
    "id" TEXT NOT NULL,
    "scope" TEXT NOT NULL,
    "graph_id" TEXT NOT NULL,
    "name" TEXT NOT NULL,
    "description" TEXT,
    "config" TEXT NOT NULL,
    "context" TEXT NOT NULL,
    "metadata" TEXT NOT NULL,
    "version" INTEGER NOT NULL,
    "created_at" TIMESTAMP(3) NOT NULL,
    "updated_at" TIMESTAMP(3) NOT NULL,

    CONSTRAINT "assistants_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "assistant_versions" (
    "assistant_id" TEXT NOT NULL,
    "version" INTEGER NOT NULL,
    "graph_id" TEXT NOT NULL,
    "name" TEXT NOT NULL,
    "description" TEXT,
    "config" TEXT NOT NULL,
    "context" TEXT NOT NULL,
    "metadata" TEXT NOT NULL,
    "created_at" TIMESTAMP(3) NOT NULL,

    CONSTRAINT "assistant_versions_pkey" PRIMARY KEY ("assistant_id","version")
);

-- CreateIndex
CREATE INDEX "assistants_graph_id_idx" ON "assistants"("graph_id");

-- AddForeignKey
ALTER TABLE "assistant_versions" ADD CONSTRAINT "assistant_versions_assistant_id_fkey" FOREIGN KEY ("assistant_id") REFERENCES "assistants"("id") ON DELETE CASCADE ON UPDATE CASCADE;

