/**
 * The database objects of message search that the Prisma model cannot express (FTS5 tables and
 * triggers on SQLite, an expression GIN index on PostgreSQL), created by the
 * `20261125200100_message_search` migrations (the SQLite ones re-keyed by session and message id
 * in `20261128140000_message_session_key`). Schema checks compare everything else with the
 * model and check these separately.
 */
export const SEARCH_OBJECTS = {
  sqlite: {
    /** `message_search` and FTS5's own shadow tables start with this. */
    tablePrefix: 'message_search',
    tables: ['message_search', 'message_search_rows'],
    triggers: ['messages_search_delete', 'messages_search_insert', 'messages_search_update'],
  },
  postgresql: { indexes: ['messages_content_search_idx'] },
} as const;
