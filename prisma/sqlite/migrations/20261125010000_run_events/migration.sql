-- CreateTable
CREATE TABLE "run_events" (
    "session_id" TEXT NOT NULL,
    "id" TEXT NOT NULL,
    "run_id" TEXT NOT NULL,
    "event" TEXT NOT NULL,
    "created_at" DATETIME NOT NULL DEFAULT CURRENT_TIMESTAMP,

    PRIMARY KEY ("session_id", "id"),
    CONSTRAINT "run_events_session_id_fkey" FOREIGN KEY ("session_id") REFERENCES "sessions" ("id") ON DELETE CASCADE ON UPDATE CASCADE
);

-- CreateTable
CREATE TABLE "run_event_trims" (
    "session_id" TEXT NOT NULL PRIMARY KEY,
    "evicted_up_to" TEXT NOT NULL,
    CONSTRAINT "run_event_trims_session_id_fkey" FOREIGN KEY ("session_id") REFERENCES "sessions" ("id") ON DELETE CASCADE ON UPDATE CASCADE
);

