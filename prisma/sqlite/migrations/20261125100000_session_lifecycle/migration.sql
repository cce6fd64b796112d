-- CreateTable
CREATE TABLE "session_activity" (
    "id" INTEGER NOT NULL PRIMARY KEY AUTOINCREMENT,
    "session_id" TEXT NOT NULL,
    "type" TEXT NOT NULL,
    "action" TEXT,
    "version_before" INTEGER,
    "version_after" INTEGER,
    "status_before" TEXT,
    "status_after" TEXT,
    "error_code" TEXT,
    "detail" TEXT NOT NULL DEFAULT '{}',
    "created_at" DATETIME NOT NULL DEFAULT CURRENT_TIMESTAMP,
    CONSTRAINT "session_activity_session_id_fkey" FOREIGN KEY ("session_id") REFERENCES "sessions" ("id") ON DELETE CASCADE ON UPDATE CASCADE
);

-- RedefineTables
PRAGMA defer_foreign_keys=ON;
PRAGMA foreign_keys=OFF;
CREATE TABLE "new_sessions" (
    "id" TEXT NOT NULL PRIMARY KEY,
    "thread_id" TEXT NOT NULL,
    "title" TEXT,
    "status" TEXT NOT NULL DEFAULT 'active',
    "agent_name" TEXT NOT NULL DEFAULT 'default',
    "config" TEXT NOT NULL DEFAULT '{}',
    "message_count" INTEGER NOT NULL DEFAULT 0,
    "version" INTEGER NOT NULL DEFAULT 1,
    "parent_id" TEXT,
    "workspace_path" TEXT,
    "projected_checkpoint_id" TEXT,
    "system_prompt" TEXT,
    "task" TEXT,
    "ended_at" DATETIME,
    "last_activity_at" DATETIME NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "expires_at" DATETIME,
    "checkpoint_retention" TEXT,
    "created_at" DATETIME NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "updated_at" DATETIME NOT NULL DEFAULT CURRENT_TIMESTAMP
);
-- Existing sessions were last active when they were last updated.
INSERT INTO "new_sessions" ("agent_name", "config", "created_at", "id", "message_count", "parent_id", "projected_checkpoint_id", "status", "thread_id", "title", "updated_at", "version", "workspace_path", "last_activity_at") SELECT "agent_name", "config", "created_at", "id", "message_count", "parent_id", "projected_checkpoint_id", "status", "thread_id", "title", "updated_at", "version", "workspace_path", "updated_at" FROM "sessions";
DROP TABLE "sessions";
ALTER TABLE "new_sessions" RENAME TO "sessions";
-- Sessions already completed or failed ended at their last update.
UPDATE "sessions" SET "ended_at" = "updated_at" WHERE "status" IN ('completed', 'failed');
CREATE UNIQUE INDEX "sessions_thread_id_key" ON "sessions"("thread_id");
CREATE INDEX "sessions_updated_at_idx" ON "sessions"("updated_at");
CREATE INDEX "sessions_status_updated_at_idx" ON "sessions"("status", "updated_at");
CREATE INDEX "sessions_status_last_activity_at_idx" ON "sessions"("status", "last_activity_at");
CREATE INDEX "sessions_last_activity_at_idx" ON "sessions"("last_activity_at");
CREATE INDEX "sessions_expires_at_idx" ON "sessions"("expires_at");
PRAGMA foreign_keys=ON;
PRAGMA defer_foreign_keys=OFF;

-- CreateIndex
CREATE INDEX "session_activity_session_id_id_idx" ON "session_activity"("session_id", "id");

