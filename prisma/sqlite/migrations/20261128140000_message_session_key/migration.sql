-- RedefineTables
PRAGMA defer_foreign_keys=ON;
PRAGMA foreign_keys=OFF;
CREATE TABLE "new_messages" (
    "id" TEXT NOT NULL,
    "session_id" TEXT NOT NULL,
    "seq" INTEGER NOT NULL,
    "role" TEXT NOT NULL,
    "content" TEXT NOT NULL,
    "tool_calls" TEXT NOT NULL DEFAULT '[]',
    "tool_call_id" TEXT,
    "token_count" INTEGER,
    "model_used" TEXT,
    "parent_id" TEXT,
    "metadata" TEXT NOT NULL DEFAULT '{}',
    "source" TEXT NOT NULL DEFAULT 'direct',
    "created_at" DATETIME NOT NULL DEFAULT CURRENT_TIMESTAMP,

    PRIMARY KEY ("session_id", "id"),
    CONSTRAINT "messages_session_id_fkey" FOREIGN KEY ("session_id") REFERENCES "sessions" ("id") ON DELETE CASCADE ON UPDATE CASCADE
);
INSERT INTO "new_messages" ("content", "created_at", "id", "metadata", "model_used", "parent_id", "role", "seq", "session_id", "source", "token_count", "tool_call_id", "tool_calls") SELECT "content", "created_at", "id", "metadata", "model_used", "parent_id", "role", "seq", "session_id", "source", "token_count", "tool_call_id", "tool_calls" FROM "messages";
DROP TABLE "messages";
ALTER TABLE "new_messages" RENAME TO "messages";
CREATE UNIQUE INDEX "messages_session_id_seq_key" ON "messages"("session_id", "seq");
PRAGMA foreign_keys=ON;
PRAGMA defer_foreign_keys=OFF;


-- Message search (20261125200100_message_search, not expressible in the Prisma model) follows
-- the new key: its rows name the session too, and the triggers, dropped with the old table, are
-- created again on the new one. The FTS5 rows and their rids stay as they are.
-- (A search row whose message is gone, which the triggers should never leave, goes first.)
DELETE FROM "message_search" WHERE rowid IN (SELECT "rid" FROM "message_search_rows"
  WHERE "message_id" NOT IN (SELECT "id" FROM "messages"));
DELETE FROM "message_search_rows" WHERE "message_id" NOT IN (SELECT "id" FROM "messages");
ALTER TABLE "message_search_rows" ADD COLUMN "session_id" TEXT NOT NULL DEFAULT '';
UPDATE "message_search_rows"
  SET "session_id" = (SELECT m."session_id" FROM "messages" m WHERE m."id" = "message_search_rows"."message_id");
DROP INDEX "message_search_rows_message_id_key";
CREATE UNIQUE INDEX "message_search_rows_session_id_message_id_key" ON "message_search_rows"("session_id", "message_id");

CREATE TRIGGER "messages_search_insert" AFTER INSERT ON "messages" BEGIN
  INSERT INTO "message_search_rows" ("session_id", "message_id") VALUES (new."session_id", new."id");
  INSERT INTO "message_search" (rowid, content) VALUES (last_insert_rowid(), new."content");
END;

CREATE TRIGGER "messages_search_delete" AFTER DELETE ON "messages" BEGIN
  DELETE FROM "message_search" WHERE rowid = (SELECT "rid" FROM "message_search_rows"
    WHERE "session_id" = old."session_id" AND "message_id" = old."id");
  DELETE FROM "message_search_rows" WHERE "session_id" = old."session_id" AND "message_id" = old."id";
END;

CREATE TRIGGER "messages_search_update" AFTER UPDATE OF "content" ON "messages" BEGIN
  UPDATE "message_search" SET content = new."content" WHERE rowid = (SELECT "rid" FROM "message_search_rows"
    WHERE "session_id" = new."session_id" AND "message_id" = new."id");
END;
