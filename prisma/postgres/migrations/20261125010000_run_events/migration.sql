-- CreateTable
CREATE TABLE "run_events" (
    "session_id" TEXT NOT NULL,
    "id" TEXT NOT NULL,
    "run_id" TEXT NOT NULL,
    "event" TEXT NOT NULL,
    "created_at" TIMESTAMP(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "run_events_pkey" PRIMARY KEY ("session_id","id")
);

-- CreateTable
CREATE TABLE "run_event_trims" (
    "session_id" TEXT NOT NULL,
    "evicted_up_to" TEXT NOT NULL,

    CONSTRAINT "run_event_trims_pkey" PRIMARY KEY ("session_id")
);

-- AddForeignKey
ALTER TABLE "run_events" ADD CONSTRAINT "run_events_session_id_fkey" FOREIGN KEY ("session_id") REFERENCES "sessions"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "run_event_trims" ADD CONSTRAINT "run_event_trims_session_id_fkey" FOREIGN KEY ("session_id") REFERENCES "sessions"("id") ON DELETE CASCADE ON UPDATE CASCADE;

