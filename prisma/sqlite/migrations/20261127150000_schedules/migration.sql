-- CreateTable
CREATE TABLE "schedules" (
    "id" TEXT NOT NULL PRIMARY KEY,
    "scope" TEXT NOT NULL,
    "kind" TEXT NOT NULL,
    "expression" TEXT,
    "timezone" TEXT NOT NULL,
    "run_at" DATETIME,
    "end_time" DATETIME,
    "enabled" BOOLEAN NOT NULL,
    "misfire" TEXT NOT NULL,
    "target" TEXT NOT NULL,
    "target_session_id" TEXT,
    "content" TEXT NOT NULL,
    "metadata" TEXT NOT NULL,
    "callback_url" TEXT,
    "multitask_strategy" TEXT NOT NULL,
    "next_fire_at" DATETIME,
    "last_fired_at" DATETIME,
    "created_at" DATETIME NOT NULL,
    "updated_at" DATETIME NOT NULL
);

-- CreateTable
CREATE TABLE "schedule_fires" (
    "schedule_id" TEXT NOT NULL,
    "due_at" DATETIME NOT NULL,
    "claimed_at" DATETIME NOT NULL,
    "node_id" TEXT NOT NULL,
    "reason" TEXT NOT NULL,
    "run_id" TEXT,
    "session_id" TEXT,
    "cleanup" TEXT NOT NULL,

    PRIMARY KEY ("schedule_id", "due_at"),
    CONSTRAINT "schedule_fires_schedule_id_fkey" FOREIGN KEY ("schedule_id") REFERENCES "schedules" ("id") ON DELETE CASCADE ON UPDATE CASCADE
);

-- CreateIndex
CREATE INDEX "schedules_enabled_next_fire_at_idx" ON "schedules"("enabled", "next_fire_at");

-- CreateIndex
CREATE INDEX "schedules_target_session_id_idx" ON "schedules"("target_session_id");

-- CreateIndex
CREATE INDEX "schedule_fires_run_id_claimed_at_idx" ON "schedule_fires"("run_id", "claimed_at");

-- CreateIndex
CREATE INDEX "schedule_fires_cleanup_idx" ON "schedule_fires"("cleanup");

