-- AlterTable
ALTER TABLE "store_items" ADD COLUMN "ttl_minutes" REAL;

