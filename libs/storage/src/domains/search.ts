import type { MessageSearchPage, MessageSearchQuery } from '@cognition/contracts';
import type { Scope } from '../scope';

/**
 * Full-text search over message contents (SQLite FTS5, PostgreSQL tsvector + GIN, memory: a
 * scan), kept current by every write of the message rows (inserts, projections, rebuilds).
 * Only sessions in the caller's scope match; a `sessionId` outside it is SESSION_NOT_FOUND.
 */
export interface SearchStore {
  search(query: MessageSearchQuery, scope: Scope): Promise<MessageSearchPage>;
}
