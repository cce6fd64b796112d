import type { CreateMessageInput, Message, StringMap } from '@cognition/contracts';
import type { SessionPolicy } from '@cognition/storage';
import { StorageError } from '@cognition/storage';
import { pgTimestamp } from '../analytics/usage-upsert';
import type pg from 'pg';
import type { RawConnection } from '../db/raw-connections';
import { inPostgresTransaction, inSqliteTransaction } from '../db/raw-connections';
import type { RawSelect } from '../db/raw-select';
import { pgUtc, rawDate, rawDateOrNull, rawSelect, sqliteTimestamp } from '../db/raw-select';
import { toMessage } from '../mapping';
import { noteDirectInsert } from './projection-ahead';
import { inScope, isLive } from '../sessions/session-reads';

/**
 * The message writes and reads of every turn on the driver.
 *
 * `messages.create` (the user message of every send) as one transaction of prepared statements
 * on the driver, where Prisma ran five statements compiled anew (~1 ms of CPU apiece): the
 * session's `message_count` increment first (it takes the session row's write lock, so
 * concurrent inserts and projection writes of one session queue behind it; no row: the
 * session does not exist), then the insert at the position after the session's last row (one
 * probe of the `(session_id, seq)` index, read by the insert itself). On PostgreSQL both are
 * first tried as one guarded statement (`postgresGuarded`, one round trip); when a writer got
 * in between, the transaction runs: the insert a statement of its own after the increment, so
 * its snapshot, taken once the lock is held, sees every row committed before (READ COMMITTED).
 */
const COLUMNS = `id, session_id, seq, role, content, tool_calls, tool_call_id, token_count,
  model_used, parent_id, metadata, source, created_at`;

const SQL = {
  sqliteTouch: `UPDATE sessions SET message_count = message_count + 1, updated_at = ?,
    last_activity_at = ? WHERE id = ?`,
  sqliteInsert: `INSERT INTO messages (${COLUMNS}) VALUES (?, ?,
    COALESCE((SELECT seq + 1 FROM messages WHERE session_id = ? ORDER BY seq DESC LIMIT 1), 0),
    ?, ?, ?, ?, ?, ?, ?, ?, 'direct', ?) RETURNING seq`,
  postgresTouch: `UPDATE sessions SET message_count = message_count + 1,
    updated_at = ${pgTimestamp('$1')}, last_activity_at = ${pgTimestamp('$1')} WHERE id = $2`,
  postgresInsert: `INSERT INTO messages (${COLUMNS}) VALUES ($1, $2,
    COALESCE((SELECT seq + 1 FROM messages WHERE session_id = $2 ORDER BY seq DESC LIMIT 1), 0),
    $3, $4, $5, $6, $7, $8, $9, $10, 'direct', ${pgTimestamp('$11')}) RETURNING seq`,
  /**
   * The increment and the insert as one statement, guarded: its snapshot is taken before the
   * increment may wait for the session row's lock, so the position it reads is current only if
   * no writer changed the session's rows meanwhile. Every such writer updates the session row,
   * so the increment applies only while the row's `xmin` is the one this statement's snapshot
   * saw (an UPDATE that waited re-checks that on the row as the other writer left it); else
   * nothing is written, no row comes back and the transaction above runs.
   */
  postgresGuarded: `WITH seen AS (SELECT xmin::text AS version FROM sessions WHERE id = $2::text),
    touched AS (
      UPDATE sessions SET message_count = message_count + 1,
        updated_at = ${pgTimestamp('$12')}, last_activity_at = ${pgTimestamp('$12')}
      WHERE id = $2::text AND xmin::text = (SELECT version FROM seen)
      RETURNING id, xmin::text AS version, thread_id, projected_checkpoint_id
    )
    INSERT INTO messages (${COLUMNS}) SELECT $1::text, $2::text,
      COALESCE((SELECT seq + 1 FROM messages WHERE session_id = $2::text
        ORDER BY seq DESC LIMIT 1), 0),
      $3::text, $4::text, $5::text, $6::text, $7::int, $8::text, $9::text, $10::text, 'direct',
      ${pgTimestamp('$11')}
    FROM touched
    RETURNING seq, (SELECT version FROM seen) AS seen, (SELECT version FROM touched) AS version,
      (SELECT thread_id FROM touched) AS thread_id,
      (SELECT projected_checkpoint_id FROM touched) AS projected_checkpoint_id,
      (SELECT min(seq) FROM messages WHERE session_id = $2::text) AS lowest_before`,
};

/** The message's columns, as JSON text where the row keeps JSON. */
export interface NewMessageRow {
  id: string;
  sessionId: string;
  role: CreateMessageInput['role'];
  content: string;
  toolCalls: string;
  toolCallId: string | null;
  tokenCount: number | null;
  modelUsed: string | null;
  parentId: string | null;
  metadata: string;
  createdAt: Date;
}

function rowValues(row: NewMessageRow): unknown[] {
  return [
    row.role,
    row.content,
    row.toolCalls,
    row.toolCallId,
    row.tokenCount,
    row.modelUsed,
    row.parentId,
    row.metadata,
  ];
}

/**
 * Inserts `row` after the session's last message and counts it on the session, in one
 * transaction; `now` is the session's new `updated_at`/`last_activity_at`.
 * @throws StorageError SESSION_NOT_FOUND when the session does not exist; the driver's unique
 * violation when the id is taken (the caller translates it).
 */
export async function insertMessageRaw(
  raw: RawConnection,
  row: NewMessageRow,
  now: Date,
): Promise<Message> {
  const notFound = (): never => {
    throw StorageError.sessionNotFound(row.sessionId);
  };
  const seq =
    raw.provider === 'sqlite'
      ? await inSqliteTransaction(raw.connection, (session) => {
          const stamp = sqliteTimestamp(now);
          const touched = session.prepare(SQL.sqliteTouch).run(stamp, stamp, row.sessionId);
          if (touched.changes === 0) notFound();
          const inserted = session
            .prepare<{ seq: number }>(SQL.sqliteInsert)
            .get(
              row.id,
              row.sessionId,
              row.sessionId,
              ...rowValues(row),
              sqliteTimestamp(row.createdAt),
            );
          return Number(inserted?.seq);
        })
      : ((await insertGuardedOnPostgres(raw.pool, row, now)) ??
        (await inPostgresTransaction(raw.pool, async (client) => {
          const touched = await client.query({
            name: 'cognition_message_touch_session',
            text: SQL.postgresTouch,
            values: [now, row.sessionId],
          });
          if (touched.rowCount === 0) notFound();
          const inserted = await client.query<{ seq: number }>({
            name: 'cognition_message_insert',
            text: SQL.postgresInsert,
            values: [row.id, row.sessionId, ...rowValues(row), row.createdAt],
          });
          return Number(inserted.rows[0]?.seq);
        })));
  return toMessage({ ...row, seq, source: 'direct' });
}

/** `postgresGuarded`: the new row's position, or undefined when it wrote nothing. */
async function insertGuardedOnPostgres(
  pool: pg.Pool,
  row: NewMessageRow,
  now: Date,
): Promise<number | undefined> {
  const inserted = await pool.query<{
    seq: number;
    seen: string;
    version: string;
    thread_id: string;
    projected_checkpoint_id: string | null;
    lowest_before: number | null;
  }>({
    name: 'cognition_message_insert_guarded',
    text: SQL.postgresGuarded,
    values: [row.id, row.sessionId, ...rowValues(row), row.createdAt, now],
  });
  const first = inserted.rows[0];
  if (!first) return undefined;
  const seq = Number(first.seq);
  // The next checkpoint put of the session plans from what it knows plus this row, no read.
  // (The subquery of `lowest_before` sees the statement's snapshot: the rows before the insert.)
  noteDirectInsert(pool, row.sessionId, first, {
    id: row.id,
    seq,
    source: 'direct',
    role: row.role,
    content: row.content,
    tool_calls: row.toolCalls,
    tool_call_id: row.toolCallId,
    token_count: row.tokenCount,
    model_used: row.modelUsed,
    parent_id: row.parentId,
    metadata: row.metadata,
  });
  return seq;
}

const MESSAGE_COLUMNS = `m.id, m.session_id, m.seq, m.role, m.content, m.tool_calls, m.tool_call_id,
  m.token_count, m.model_used, m.parent_id, m.metadata, m.source`;

/** One message with what decides its session's visibility (liveness here, scopes apart). */
const MESSAGE_READ: RawSelect = {
  name: 'cognition_message_by_id',
  sqlite: `SELECT ${MESSAGE_COLUMNS}, m.created_at, s.expires_at, s.last_activity_at
    FROM messages m JOIN sessions s ON s.id = m.session_id WHERE m.id = ? AND m.session_id = ?`,
  postgres: `SELECT ${MESSAGE_COLUMNS}, ${pgUtc('m.created_at', 'created_at')},
    ${pgUtc('s.expires_at', 'expires_at')}, ${pgUtc('s.last_activity_at', 'last_activity_at')}
    FROM messages m JOIN sessions s ON s.id = m.session_id WHERE m.id = $1 AND m.session_id = $2`,
};

const SCOPES_READ: RawSelect = {
  name: 'cognition_session_scopes',
  sqlite: 'SELECT key, value FROM session_scopes WHERE session_id = ?',
  postgres: 'SELECT key, value FROM session_scopes WHERE session_id = $1',
};

interface RawMessageRow {
  id: string;
  session_id: string;
  seq: number;
  role: string;
  content: string;
  tool_calls: string;
  tool_call_id: string | null;
  token_count: number | null;
  model_used: string | null;
  parent_id: string | null;
  metadata: string;
  source: string;
  created_at: unknown;
  expires_at: unknown;
  last_activity_at: unknown;
}

/**
 * Message `messageId` of session `sessionId` when the session is live and visible to `scope`
 * (the finisher reads the turn's answer this way): one prepared statement, plus the session's
 * scopes when `scope` has any.
 */
export async function readMessageRaw(
  raw: RawConnection,
  sessionId: string,
  messageId: string,
  scope: StringMap,
  policy: SessionPolicy,
): Promise<Message | null> {
  const [row] = await rawSelect<RawMessageRow>(raw, MESSAGE_READ, [messageId, sessionId]);
  if (!row) return null;
  const session = {
    expiresAt: rawDateOrNull(row.expires_at),
    lastActivityAt: rawDate(row.last_activity_at),
  };
  if (!isLive(session, policy)) return null;
  if (Object.keys(scope).length > 0) {
    const pairs = await rawSelect<{ key: string; value: string }>(raw, SCOPES_READ, [sessionId]);
    if (!inScope(Object.fromEntries(pairs.map((pair) => [pair.key, pair.value])), scope)) {
      return null;
    }
  }
  return toMessage({
    id: row.id,
    sessionId: row.session_id,
    seq: Number(row.seq),
    role: row.role,
    content: row.content,
    toolCalls: row.tool_calls,
    toolCallId: row.tool_call_id,
    tokenCount: row.token_count === null ? null : Number(row.token_count),
    modelUsed: row.model_used,
    parentId: row.parent_id,
    metadata: row.metadata,
    source: row.source,
    createdAt: rawDate(row.created_at),
  });
}
