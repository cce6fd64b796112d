-- AlterTable: what a run of a langgraph.json graph was made with (JSON text: GraphRunKwargs)
ALTER TABLE "runs" ADD COLUMN "kwargs" TEXT;
