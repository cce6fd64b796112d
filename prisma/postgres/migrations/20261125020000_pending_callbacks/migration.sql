-- CreateTable
CREATE TABLE "pending_callbacks" (
    "delivery_id" TEXT NOT NULL,
    "run_id" TEXT NOT NULL,
    "url" TEXT NOT NULL,
    "body" TEXT NOT NULL,
    "attempts" INTEGER NOT NULL,
    "next_attempt_at" TIMESTAMP(3) NOT NULL,

    CONSTRAINT "pending_callbacks_pkey" PRIMARY KEY ("delivery_id")
);

-- CreateIndex
CREATE INDEX "pending_callbacks_next_attempt_at_idx" ON "pending_callbacks"("next_attempt_at");

-- AddForeignKey
ALTER TABLE "pending_callbacks" ADD CONSTRAINT "pending_callbacks_run_id_fkey" FOREIGN KEY ("run_id") REFERENCES "runs"("id") ON DELETE CASCADE ON UPDATE CASCADE;

