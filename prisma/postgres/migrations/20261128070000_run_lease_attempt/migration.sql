-- AlterTable
ALTER TABLE "runs" ADD COLUMN "lease_attempt" INTEGER NOT NULL DEFAULT 0;
