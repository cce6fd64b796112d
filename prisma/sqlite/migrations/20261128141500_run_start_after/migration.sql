-- AlterTable
ALTER TABLE "runs" ADD COLUMN "start_after" DATETIME;
