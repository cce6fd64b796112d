-- AlterTable
ALTER TABLE "runs" ADD COLUMN "multitask_strategy" TEXT;
ALTER TABLE "runs" ADD COLUMN "supersedes_run_id" TEXT;
ALTER TABLE "runs" ADD COLUMN "callback_url" TEXT;
ALTER TABLE "runs" ADD COLUMN "pending_input" TEXT;
ALTER TABLE "runs" ADD COLUMN "base_checkpoint_id" TEXT;
