-- Full-text search over message contents (not expressible in the Prisma model; see the
-- storage-prisma README, "Message search"). An FTS5 table keyed by a stable integer per message
-- (message_search_rows.rid: rowids of `messages` itself may change on VACUUM), kept current by
-- triggers on `messages`, so every write path (inserts, projections, rebuilds) updates it.
CREATE TABLE "message_search_rows" (
    "rid" INTEGER NOT NULL PRIMARY KEY,
    "message_id" TEXT NOT NULL
);
CREATE UNIQUE INDEX "message_search_rows_message_id_key" ON "message_search_rows"("message_id");

CREATE VIRTUAL TABLE "message_search" USING fts5(content, tokenize = 'unicode61 remove_diacritics 2');

CREATE TRIGGER "messages_search_insert" AFTER INSERT ON "messages" BEGIN
  INSERT INTO "message_search_rows" ("message_id") VALUES (new."id");
  INSERT INTO "message_search" (rowid, content) VALUES (last_insert_rowid(), new."content");
END;

CREATE TRIGGER "messages_search_delete" AFTER DELETE ON "messages" BEGIN
  DELETE FROM "message_search" WHERE rowid = (SELECT "rid" FROM "message_search_rows" WHERE "message_id" = old."id");
  DELETE FROM "message_search_rows" WHERE "message_id" = old."id";
END;

CREATE TRIGGER "messages_search_update" AFTER UPDATE OF "content" ON "messages" BEGIN
  UPDATE "message_search" SET content = new."content" WHERE rowid = (SELECT "rid" FROM "message_search_rows" WHERE "message_id" = new."id");
END;

-- Messages stored before this migration.
INSERT INTO "message_search_rows" ("message_id") SELECT "id" FROM "messages";
INSERT INTO "message_search" (rowid, content)
  SELECT r."rid", m."content" FROM "message_search_rows" r JOIN "messages" m ON m."id" = r."message_id";
