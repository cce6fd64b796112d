import type { Session, SessionSort } from '@cognition/contracts';

const key: Record<SessionSort, (s: Session) => number | string> = {
  updated_at: (s) => s.updatedAt.getTime(),
  created_at: (s) => s.createdAt.getTime(),
  // Untitled sessions sort as an empty title, as they do in SQL (COALESCE) on the other backends.
  title: (s) => s.title ?? '',
  message_count: (s) => s.messageCount,
};

function compare(a: number | string, b: number | string): number {
  if (typeof a === 'number' && typeof b === 'number') return a - b;
  // Code-point order, as SQLite's BINARY collation and PostgreSQL's "C" collation compare.
  return a < b ? -1 : a > b ? 1 : 0;
}

/** The list order of ListSessionsQuery: the sort key, then creation time and id, all in `order`. */
export function compareSessions(sort: SessionSort, order: 'asc' | 'desc') {
  const sign = order === 'asc' ? 1 : -1;
  return (a: Session, b: Session): number =>
    sign *
    (compare(key[sort](a), key[sort](b)) ||
      a.createdAt.getTime() - b.createdAt.getTime() ||
      compare(a.id, b.id));
}
