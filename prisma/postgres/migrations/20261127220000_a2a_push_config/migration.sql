-- AlterTable: how an A2A push notification config wants a run's callback sent (JSON text)
ALTER TABLE "runs" ADD COLUMN "callback_config" TEXT;

-- AlterTable: headers a pending delivery sends besides ours (JSON text)
ALTER TABLE "pending_callbacks" ADD COLUMN "headers" TEXT NOT NULL DEFAULT '{}';
