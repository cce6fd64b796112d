-- AlterTable: what a run paused for a decision (requires_action) waits on
ALTER TABLE "runs" ADD COLUMN "pending_action" TEXT;
