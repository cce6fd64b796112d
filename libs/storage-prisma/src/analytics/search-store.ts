import type { MessageRole, MessageSearchPage, MessageSearchQuery } from '@cognition/contracts';
import { MessageSearchQuerySchema } from '@cognition/contracts';
import type { z } from 'zod';
import type { Scope, SearchStore } from '@cognition/storage';
import { parseInput, searchTerms, StorageError } from '@cognition/storage';
import type { PrismaDb } from '../db/db';
import { guard } from '../db/errors';
import { scopeWhere } from '../mapping';
import type { DatabaseProvider } from '../db/migrate';
import { parseScope } from '../sessions/session-store';
import { num, sessionConditions, SqlBuilder, whereClause } from './sql-filters';

/** The indexed text of a message on PostgreSQL (the expression of its GIN index). */
const PG_VECTOR = `to_tsvector('simple'::regconfig, left(m.content, 100000))`;

type MessageSearchQueryParsed = z.output<typeof MessageSearchQuerySchema>;

interface HitRow {
  id: string;
  session_id: string;
  title: string | null;
  role: string;
  created_at: unknown;
  snippet: string | null;
  rank: unknown;
  total: unknown;
}

/**
 * Message search in the database: SQLite FTS5 (`message_search`, BM25 ranking, `snippet()`),
 * PostgreSQL `simple` text search over a GIN expression index (`ts_rank`, `ts_headline`), both
 * kept current by the writes of `messages` themselves (triggers / an expression index; see the
 * `20261125200100_message_search` migrations; on SQLite the FTS5 rows are keyed by session and
 * message id since `20261128140000_message_session_key`). Sessions outside the caller's scope
 * never match.
 */
export class PrismaSearchStore implements SearchStore {
  constructor(
    private readonly db: PrismaDb,
    private readonly provider: DatabaseProvider,
  ) {}

  async search(query: MessageSearchQuery, scope: Scope): Promise<MessageSearchPage> {
    const q = parseInput(MessageSearchQuerySchema, query, 'search query');
    const scopes = parseScope(scope);
    return guard('search messages', async () => {
      if (q.sessionId !== undefined) {
        const visible = await this.db.session.findFirst({
          where: { id: q.sessionId, AND: scopeWhere(scopes) },
          select: { id: true },
        });
        if (!visible) throw StorageError.sessionNotFound(q.sessionId);
      }
      const { text, params, countText, countParams } = searchStatement(this.provider, q, scopes);
      const rows = await this.db.$queryRawUnsafe<HitRow[]>(text, ...params);
      // An offset past the last match leaves no row to carry the count.
      const total =
        rows.length > 0
          ? num(rows[0]?.total)
          : q.offset === 0
            ? 0
            : num(
                (await this.db.$queryRawUnsafe<{ total: unknown }[]>(countText, ...countParams))[0]
                  ?.total,
              );
      return {
        hits: rows.map((row) => ({
          messageId: row.id,
          sessionId: row.session_id,
          sessionTitle: row.title,
          role: row.role as MessageRole,
          createdAt:
            row.created_at instanceof Date ? row.created_at : new Date(String(row.created_at)),
          snippet: row.snippet ?? '',
          rank: Math.round(num(row.rank) * 1e6) / 1e6,
        })),
        total,
        hasMore: q.offset + rows.length < total,
      };
    });
  }
}

/**
 * The search query of one page (rank, count by window, page, snippets) and the plain count used
 * when the page is past the last match. Exported for the benchmark's query plans.
 */
export function searchStatement(
  provider: DatabaseProvider,
  q: MessageSearchQueryParsed,
  scopes: Record<string, string>,
): { text: string; params: unknown[]; countText: string; countParams: unknown[] } {
  const terms = searchTerms(q.q);
  const sql = new SqlBuilder(provider);
  const sqlite = provider === 'sqlite';
  const ftsQuery = sqlite ? terms.map((t) => `"${t}"`).join(' ') : terms.join(' & ');
  const match = sqlite
    ? `message_search MATCH ${sql.param(ftsQuery)}`
    : `${PG_VECTOR} @@ to_tsquery('simple'::regconfig, ${sql.param(ftsQuery)})`;
  const conditions = [
    match,
    ...sessionConditions(sql, scopes, { abandonAfterSeconds: 1 }, new Date()),
  ];
  if (q.sessionId !== undefined) conditions.push(`m.session_id = ${sql.param(q.sessionId)}`);
  if (q.role !== undefined) conditions.push(`m.role = ${sql.param(q.role)}`);
  if (q.from) conditions.push(`m.created_at >= ${sql.time(q.from)}`);
  if (q.to) conditions.push(`m.created_at < ${sql.time(q.to)}`);
  const from = sqlite
    ? `message_search JOIN message_search_rows r ON r.rid = message_search.rowid
       JOIN messages m ON m.session_id = r.session_id AND m.id = r.message_id
       JOIN sessions s ON s.id = m.session_id`
    : 'messages m JOIN sessions s ON s.id = m.session_id';
  const where = whereClause(conditions);
  const countParams = [...sql.params];
  const limit = sql.param(q.limit);
  const offset = sql.param(q.offset);
  // The caller's matches are collected first (scope and filters applied), then one pass ranks
  // them, counts them (a window over the same rows) and keeps one page; snippets are made for
  // that page's rows only. (PostgreSQL otherwise ranked every tenant's matches before the
  // scope check.)
  const text = sqlite
    ? `WITH ranked AS MATERIALIZED (
         SELECT message_search.rowid AS rid, bm25(message_search) AS score, m.id AS id,
           m.session_id AS session_id, s.title AS title, m.role AS role,
           m.created_at AS created_at
         FROM ${from} ${where}
       ),
       page AS (
         SELECT ranked.*, COUNT(*) OVER () AS total FROM ranked
         ORDER BY score, created_at DESC, id, session_id
         LIMIT ${limit} OFFSET ${offset}
       )
       SELECT page.id, page.session_id, page.title, page.role, page.created_at, page.total,
         -page.score AS rank, snippet(message_search, 0, '[', ']', '…', 16) AS snippet
       FROM page JOIN message_search ON message_search.rowid = page.rid
       WHERE message_search MATCH ${sql.param(ftsQuery)}
       ORDER BY page.score, page.created_at DESC, page.id, page.session_id`
    : `WITH hits AS MATERIALIZED (
         SELECT m.id, m.session_id, s.title, m.role, m.created_at, m.content
         FROM ${from} ${where}
       )
       SELECT hit.id, hit.session_id, hit.title, hit.role, hit.created_at, hit.rank, hit.total,
         ts_headline('simple'::regconfig, left(hit.content, 100000),
           to_tsquery('simple'::regconfig, $1),
           'StartSel=[, StopSel=], MaxWords=16, MinWords=6, MaxFragments=1, FragmentDelimiter=…') AS snippet
       FROM (
         SELECT h.*,
           ts_rank(to_tsvector('simple'::regconfig, left(h.content, 100000)),
             to_tsquery('simple'::regconfig, $1)) AS rank,
           COUNT(*) OVER () AS total
         FROM hits h
         ORDER BY rank DESC, h.created_at DESC, h.id, h.session_id
         LIMIT ${limit} OFFSET ${offset}
       ) hit
       ORDER BY hit.rank DESC, hit.created_at DESC, hit.id, hit.session_id`;
  return {
    text,
    params: sql.params,
    countText: `SELECT COUNT(*) AS total FROM ${from} ${where}`,
    countParams,
  };
}
