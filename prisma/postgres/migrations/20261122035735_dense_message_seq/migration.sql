-- Dense positions before the unique index: earlier versions could leave gaps or duplicate
-- positions in a session (a message count moved by updateMessageCount). Rows keep the order the
-- pages used, (seq, created_at, id), and are numbered 0 .. rows - 1 per session.
UPDATE "messages" SET "seq" = "ordered"."position"
FROM (
    SELECT "id", ROW_NUMBER() OVER (PARTITION BY "session_id" ORDER BY "seq", "created_at", "id") - 1 AS "position"
    FROM "messages"
) AS "ordered"
WHERE "messages"."id" = "ordered"."id" AND "messages"."seq" <> "ordered"."position";

-- DropIndex
DROP INDEX "messages_session_id_seq_idx";

-- CreateIndex
CREATE UNIQUE INDEX "messages_session_id_seq_key" ON "messages"("session_id", "seq");

