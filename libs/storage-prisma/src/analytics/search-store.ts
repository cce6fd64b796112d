import type { MessageRole, MessageSearchPage, MessageSearchQuery } from '@cognition/contracts';
import { MessageSearchQuerySchema } from '@cognition/contracts';
import type { Scope, SearchStore } from '@cognition/storage';
import { parseInput, searchTerms, StorageError } from '@cognition/storage';
import type { PrismaDb } from '../db';
import { guard } from '../errors';
import { scopeWhere } from '../mapping';
import type { DatabaseProvider } from '../migrate';
import { parseScope } from '../session-store';
import { num, sessionConditions, SqlBuilder, whereClause } from './sql-filters';

/** The indexed text of a message on PostgreSQL (the expression of its GIN index). */
const PG_VECTOR = `to_tsvector('simple'::regconfig, left(m.content, 100000))`;

interface HitRow {
  id: string;
  session_id: string;
  title: string | null;
  role: string;
  created_at: unknown;
  snippet: string | null;
  rank: unknown;
}

/**
 * Message search in the database: SQLite FTS5 (`message_search`, BM25 ranking, `snippet()`),
 * PostgreSQL `simple` text search over a GIN expression index (`ts_rank`, `ts_headline`), both
 * kept current by the writes of `messages` themselves (triggers / an expression index; see the
 * `20261125200100_message_search` migrations). Sessions outside the caller's scope never match.
 */
export class PrismaSearchStore implements SearchStore {
  constructor(
    private readonly db: PrismaDb,
    private readonly provider: DatabaseProvider,
  ) {}

  async search(query: MessageSearchQuery, scope: Scope): Promise<MessageSearchPage> {
    const q = parseInput(MessageSearchQuerySchema, query, 'search query');
    const scopes = parseScope(scope);
    const terms = searchTerms(q.q);
    return guard('search messages', async () => {
      if (q.sessionId !== undefined) {
        const visible = await this.db.session.findFirst({
          where: { id: q.sessionId, AND: scopeWhere(scopes) },
          select: { id: true },
        });
        if (!visible) throw StorageError.sessionNotFound(q.sessionId);
      }
      const sql = new SqlBuilder(this.provider);
      const sqlite = this.provider === 'sqlite';
      const match = sqlite
        ? `message_search MATCH ${sql.param(terms.map((t) => `"${t}"`).join(' '))}`
        : `${PG_VECTOR} @@ to_tsquery('simple'::regconfig, ${sql.param(terms.join(' & '))})`;
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
           JOIN messages m ON m.id = r.message_id JOIN sessions s ON s.id = m.session_id`
        : 'messages m JOIN sessions s ON s.id = m.session_id';
      const where = whereClause(conditions);
      const countParams = [...sql.params];
      const countRows = await this.db.$queryRawUnsafe<{ total: unknown }[]>(
        `SELECT COUNT(*) AS total FROM ${from} ${where}`,
        ...countParams,
      );
      const total = num(countRows[0]?.total);
      if (total === 0 || q.offset >= total) return { hits: [], total, hasMore: false };
      const limit = sql.param(q.limit);
      const offset = sql.param(q.offset);
      const text = sqlite
        ? `SELECT m.id AS id, m.session_id AS session_id, s.title AS title, m.role AS role,
             m.created_at AS created_at,
             snippet(message_search, 0, '[', ']', '…', 16) AS snippet,
             -bm25(message_search) AS rank
           FROM ${from} ${where}
           ORDER BY bm25(message_search), m.created_at DESC, m.id
           LIMIT ${limit} OFFSET ${offset}`
        : `SELECT hit.id, hit.session_id, hit.title, hit.role, hit.created_at, hit.rank,
             ts_headline('simple'::regconfig, left(hit.content, 100000), hit.query,
               'StartSel=[, StopSel=], MaxWords=16, MinWords=6, MaxFragments=1, FragmentDelimiter=…') AS snippet
           FROM (
             SELECT m.id, m.session_id, s.title, m.role, m.created_at, m.content,
               to_tsquery('simple'::regconfig, $1) AS query,
               ts_rank(${PG_VECTOR}, to_tsquery('simple'::regconfig, $1)) AS rank
             FROM ${from} ${where}
             ORDER BY rank DESC, m.created_at DESC, m.id
             LIMIT ${limit} OFFSET ${offset}
           ) hit
           ORDER BY hit.rank DESC, hit.created_at DESC, hit.id`;
      const rows = await this.db.$queryRawUnsafe<HitRow[]>(text, ...sql.params);
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
