-- CreateTable
CREATE TABLE "session_usage" (
    "session_id" TEXT NOT NULL PRIMARY KEY,
    "tokens_in" INTEGER NOT NULL DEFAULT 0,
    "tokens_out" INTEGER NOT NULL DEFAULT 0,
    "estimated_tokens_in" INTEGER NOT NULL DEFAULT 0,
    "estimated_tokens_out" INTEGER NOT NULL DEFAULT 0,
    "cost_usd" REAL NOT NULL DEFAULT 0,
    "unpriced_calls" INTEGER NOT NULL DEFAULT 0,
    "runs" INTEGER NOT NULL DEFAULT 0,
    "error_count" INTEGER NOT NULL DEFAULT 0,
    "aborted_count" INTEGER NOT NULL DEFAULT 0,
    "feedback_count" INTEGER NOT NULL DEFAULT 0,
    "feedback_score_sum" INTEGER NOT NULL DEFAULT 0,
    "last_model" TEXT,
    "last_provider" TEXT,
    "started_at" DATETIME,
    "last_activity_at" DATETIME,
    "ended_at" DATETIME,
    CONSTRAINT "session_usage_session_id_fkey" FOREIGN KEY ("session_id") REFERENCES "sessions" ("id") ON DELETE CASCADE ON UPDATE CASCADE
);

-- CreateTable
CREATE TABLE "session_model_usage" (
    "session_id" TEXT NOT NULL,
    "provider" TEXT NOT NULL,
    "model" TEXT NOT NULL,
    "calls" INTEGER NOT NULL DEFAULT 0,
    "tokens_in" INTEGER NOT NULL DEFAULT 0,
    "tokens_out" INTEGER NOT NULL DEFAULT 0,
    "cost_usd" REAL NOT NULL DEFAULT 0,
    "unpriced_calls" INTEGER NOT NULL DEFAULT 0,

    PRIMARY KEY ("session_id", "provider", "model"),
    CONSTRAINT "session_model_usage_session_id_fkey" FOREIGN KEY ("session_id") REFERENCES "sessions" ("id") ON DELETE CASCADE ON UPDATE CASCADE
);

-- CreateTable
CREATE TABLE "message_feedback" (
    "session_id" TEXT NOT NULL,
    "message_id" TEXT NOT NULL,
    "score" INTEGER NOT NULL,
    "text" TEXT,
    "created_at" DATETIME NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "updated_at" DATETIME NOT NULL DEFAULT CURRENT_TIMESTAMP,

    PRIMARY KEY ("session_id", "message_id"),
    CONSTRAINT "message_feedback_session_id_fkey" FOREIGN KEY ("session_id") REFERENCES "sessions" ("id") ON DELETE CASCADE ON UPDATE CASCADE
);

-- CreateIndex
CREATE INDEX "session_model_usage_provider_model_idx" ON "session_model_usage"("provider", "model");

-- CreateIndex
CREATE INDEX "sessions_created_at_idx" ON "sessions"("created_at");


-- Backfill: the usage totals of the runs recorded before this migration (a run without a
-- per-model breakdown counts as one call of its model).
INSERT INTO "session_usage" ("session_id", "tokens_in", "tokens_out", "estimated_tokens_in", "estimated_tokens_out", "cost_usd", "unpriced_calls", "runs", "error_count", "aborted_count", "last_activity_at", "started_at", "ended_at")
SELECT "session_id",
  COALESCE(SUM(json_extract("usage", '$.inputTokens')), 0),
  COALESCE(SUM(json_extract("usage", '$.outputTokens')), 0),
  COALESCE(SUM(CASE WHEN json_extract("usage", '$.estimated') = 1 THEN json_extract("usage", '$.inputTokens') ELSE 0 END), 0),
  COALESCE(SUM(CASE WHEN json_extract("usage", '$.estimated') = 1 THEN json_extract("usage", '$.outputTokens') ELSE 0 END), 0),
  COALESCE(SUM(json_extract("usage", '$.costUsd')), 0),
  SUM(CASE WHEN "usage" IS NOT NULL AND json_extract("usage", '$.costUsd') IS NULL THEN 1 ELSE 0 END),
  COUNT(*),
  SUM(CASE WHEN "status" = 'failed' THEN 1 ELSE 0 END),
  SUM(CASE WHEN "status" = 'aborted' THEN 1 ELSE 0 END),
  MAX("updated_at"),
  MIN(COALESCE("started_at", "created_at")),
  MAX("finished_at")
FROM "runs" GROUP BY "session_id";

INSERT INTO "session_model_usage" ("session_id", "provider", "model", "calls", "tokens_in", "tokens_out", "cost_usd", "unpriced_calls")
SELECT "session_id", json_extract("usage", '$.provider'), json_extract("usage", '$.model'), COUNT(*),
  SUM(json_extract("usage", '$.inputTokens')),
  SUM(json_extract("usage", '$.outputTokens')),
  COALESCE(SUM(json_extract("usage", '$.costUsd')), 0),
  SUM(CASE WHEN json_extract("usage", '$.costUsd') IS NULL THEN 1 ELSE 0 END)
FROM "runs"
WHERE "usage" IS NOT NULL AND json_extract("usage", '$.provider') IS NOT NULL AND json_extract("usage", '$.model') IS NOT NULL
GROUP BY 1, 2, 3;
