-- CreateTable
CREATE TABLE "session_usage" (
    "session_id" TEXT NOT NULL,
    "tokens_in" INTEGER NOT NULL DEFAULT 0,
    "tokens_out" INTEGER NOT NULL DEFAULT 0,
    "estimated_tokens_in" INTEGER NOT NULL DEFAULT 0,
    "estimated_tokens_out" INTEGER NOT NULL DEFAULT 0,
    "cost_usd" DOUBLE PRECISION NOT NULL DEFAULT 0,
    "unpriced_calls" INTEGER NOT NULL DEFAULT 0,
    "runs" INTEGER NOT NULL DEFAULT 0,
    "error_count" INTEGER NOT NULL DEFAULT 0,
    "aborted_count" INTEGER NOT NULL DEFAULT 0,
    "feedback_count" INTEGER NOT NULL DEFAULT 0,
    "feedback_score_sum" INTEGER NOT NULL DEFAULT 0,
    "last_model" TEXT,
    "last_provider" TEXT,
    "started_at" TIMESTAMP(3),
    "last_activity_at" TIMESTAMP(3),
    "ended_at" TIMESTAMP(3),

    CONSTRAINT "session_usage_pkey" PRIMARY KEY ("session_id")
);

-- CreateTable
CREATE TABLE "session_model_usage" (
    "session_id" TEXT NOT NULL,
    "provider" TEXT NOT NULL,
    "model" TEXT NOT NULL,
    "calls" INTEGER NOT NULL DEFAULT 0,
    "tokens_in" INTEGER NOT NULL DEFAULT 0,
    "tokens_out" INTEGER NOT NULL DEFAULT 0,
    "cost_usd" DOUBLE PRECISION NOT NULL DEFAULT 0,
    "unpriced_calls" INTEGER NOT NULL DEFAULT 0,

    CONSTRAINT "session_model_usage_pkey" PRIMARY KEY ("session_id","provider","model")
);

-- CreateTable
CREATE TABLE "message_feedback" (
    "session_id" TEXT NOT NULL,
    "message_id" TEXT NOT NULL,
    "score" INTEGER NOT NULL,
    "text" TEXT,
    "created_at" TIMESTAMP(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "updated_at" TIMESTAMP(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "message_feedback_pkey" PRIMARY KEY ("session_id","message_id")
);

-- CreateIndex
CREATE INDEX "session_model_usage_provider_model_idx" ON "session_model_usage"("provider", "model");

-- CreateIndex
CREATE INDEX "sessions_created_at_idx" ON "sessions"("created_at");

-- AddForeignKey
ALTER TABLE "session_usage" ADD CONSTRAINT "session_usage_session_id_fkey" FOREIGN KEY ("session_id") REFERENCES "sessions"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "session_model_usage" ADD CONSTRAINT "session_model_usage_session_id_fkey" FOREIGN KEY ("session_id") REFERENCES "sessions"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "message_feedback" ADD CONSTRAINT "message_feedback_session_id_fkey" FOREIGN KEY ("session_id") REFERENCES "sessions"("id") ON DELETE CASCADE ON UPDATE CASCADE;


-- Backfill: the usage totals of the runs recorded before this migration (a run without a
-- per-model breakdown counts as one call of its model).
INSERT INTO "session_usage" ("session_id", "tokens_in", "tokens_out", "estimated_tokens_in", "estimated_tokens_out", "cost_usd", "unpriced_calls", "runs", "error_count", "aborted_count", "last_activity_at", "started_at", "ended_at")
SELECT "session_id",
  COALESCE(SUM(("usage"::jsonb->>'inputTokens')::int), 0),
  COALESCE(SUM(("usage"::jsonb->>'outputTokens')::int), 0),
  COALESCE(SUM(CASE WHEN ("usage"::jsonb->>'estimated') = 'true' THEN ("usage"::jsonb->>'inputTokens')::int ELSE 0 END), 0),
  COALESCE(SUM(CASE WHEN ("usage"::jsonb->>'estimated') = 'true' THEN ("usage"::jsonb->>'outputTokens')::int ELSE 0 END), 0),
  COALESCE(SUM(("usage"::jsonb->>'costUsd')::double precision), 0),
  SUM(CASE WHEN "usage" IS NOT NULL AND ("usage"::jsonb->>'costUsd') IS NULL THEN 1 ELSE 0 END),
  COUNT(*),
  SUM(CASE WHEN "status" = 'failed' THEN 1 ELSE 0 END),
  SUM(CASE WHEN "status" = 'aborted' THEN 1 ELSE 0 END),
  MAX("updated_at"),
  MIN(COALESCE("started_at", "created_at")),
  MAX("finished_at")
FROM "runs" GROUP BY "session_id";

INSERT INTO "session_model_usage" ("session_id", "provider", "model", "calls", "tokens_in", "tokens_out", "cost_usd", "unpriced_calls")
SELECT "session_id", "usage"::jsonb->>'provider', "usage"::jsonb->>'model', COUNT(*),
  SUM(("usage"::jsonb->>'inputTokens')::int),
  SUM(("usage"::jsonb->>'outputTokens')::int),
  COALESCE(SUM(("usage"::jsonb->>'costUsd')::double precision), 0),
  SUM(CASE WHEN ("usage"::jsonb->>'costUsd') IS NULL THEN 1 ELSE 0 END)
FROM "runs"
WHERE "usage" IS NOT NULL AND ("usage"::jsonb->>'provider') IS NOT NULL AND ("usage"::jsonb->>'model') IS NOT NULL
GROUP BY 1, 2, 3;
