-- CreateTable
CREATE TABLE "callback_attempts" (
    "run_id" TEXT NOT NULL,
    "delivery_id" TEXT NOT NULL,
    "attempt" INTEGER NOT NULL,
    "url" TEXT NOT NULL,
    "started_at" DATETIME NOT NULL,
    "duration_ms" INTEGER NOT NULL,
    "status" INTEGER,
    "ok" BOOLEAN NOT NULL,
    "error" TEXT,

    PRIMARY KEY ("run_id", "delivery_id", "attempt"),
    CONSTRAINT "callback_attempts_run_id_fkey" FOREIGN KEY ("run_id") REFERENCES "runs" ("id") ON DELETE CASCADE ON UPDATE CASCADE
);

-- CreateIndex
CREATE INDEX "callback_attempts_run_id_started_at_idx" ON "callback_attempts"("run_id", "started_at");

