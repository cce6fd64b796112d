-- AlterTable
ALTER TABLE "runs" ADD COLUMN "start_after" TIMESTAMP(3);
