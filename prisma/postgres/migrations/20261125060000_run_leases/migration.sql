-- AlterTable
ALTER TABLE "runs" ADD COLUMN     "owner_node" TEXT,
ADD COLUMN     "lease_expires_at" TIMESTAMP(3);
