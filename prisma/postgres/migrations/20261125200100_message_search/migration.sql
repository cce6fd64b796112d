-- Full-text search over message contents (not expressible in the Prisma model; see the
-- storage-prisma README, "Message search"): a GIN index over the `simple` text-search vector of
-- each message's first 100,000 characters (a tsvector is limited to 1 MB). An expression index,
-- so every write of `messages` keeps it current and there is nothing to backfill by hand.
CREATE INDEX "messages_content_search_idx" ON "messages" USING GIN (to_tsvector('simple'::regconfig, left("content", 100000)));
