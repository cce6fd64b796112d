-- AlterTable
ALTER TABLE "messages" DROP CONSTRAINT "messages_pkey",
ADD CONSTRAINT "messages_pkey" PRIMARY KEY ("session_id", "id");

