-- AlterTable
ALTER TABLE "runs" ADD COLUMN     "multitask_strategy" TEXT,
ADD COLUMN     "supersedes_run_id" TEXT,
ADD COLUMN     "callback_url" TEXT,
ADD COLUMN     "pending_input" TEXT,
ADD COLUMN     "base_checkpoint_id" TEXT;
