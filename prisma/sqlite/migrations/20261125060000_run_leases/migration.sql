-- AlterTable
ALTER TABLE "runs" ADD COLUMN "owner_node" TEXT;
ALTER TABLE "runs" ADD COLUMN "lease_expires_at" DATETIME;
