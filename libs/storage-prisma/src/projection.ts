import type { ProjectedMessage } from '@cognition/storage';
import {
  checkpointMessages,
  isLatestCheckpointId,
  MESSAGES_CHANNEL,
  planProjection,
  projectCheckpointMessages,
  ROOT_CHECKPOINT_NS,
  StorageError,
} from '@cognition/storage';
import type { BaseMessage } from '@langchain/core/messages';
import type pg from 'pg';
import type { PrismaDb } from './db';
import type { RootCheckpoint, RootCheckpointHook } from './langgraph/checkpoint-saver';
import { inPostgresTransaction, inSqliteTransaction, rawConnectionOf } from './raw-connections';
import type { SqliteSession } from './sqlite-connection';

/**
 * The message projection's SQL. It runs on every root checkpoint put (~5 per turn), so it skips
 * Prisma's query engine, whose per-statement cost (the query compiler, row mapping, ~0.5 ms a
 * statement on PostgreSQL) was most of a put: on SQLite, prepared better-sqlite3 statements run
 * synchronously inside the put's transaction; on PostgreSQL, node-postgres named statements on
 * the client holding the put's transaction, one statement per kind of write whatever the number
 * of rows.
 */

/** A message row as the projection reads it: the columns it owns, raw, plus id and source. */
interface StoredRow {
  id: string;
  seq: number;
  source: string;
  role: string;
  content: string;
  tool_calls: string;
  tool_call_id: string | null;
  token_count: number | null;
  model_used: string | null;
  parent_id: string | null;
  metadata: string;
}

/** What a projected row's columns are (`source` is always `'checkpoint'`). */
type ProjectedRow = Omit<StoredRow, 'source'>;

const COMPARED: readonly (keyof ProjectedRow)[] = [
  'role',
  'content',
  'tool_calls',
  'tool_call_id',
  'token_count',
  'model_used',
  'parent_id',
  'metadata',
];

function projectedRow(message: ProjectedMessage): ProjectedRow {
  return {
    id: message.id,
    seq: message.seq,
    role: message.role,
    content: message.content,
    tool_calls: JSON.stringify(message.toolCalls),
    tool_call_id: message.toolCallId,
    token_count: message.tokenCount,
    model_used: message.modelUsed,
    parent_id: message.parentId,
    metadata: JSON.stringify(message.metadata),
  };
}

/** The writes that turn a session's rows into a projection; computed by {@link planWrites}. */
interface ProjectionWrites {
  deleteIds: string[];
  /** Projected rows that exist but differ: every owned column is written, `source` included. */
  rewrites: ProjectedRow[];
  /** Pending rows that only change position. */
  moves: { id: string; seq: number }[];
  /**
   * Set when rows change position: the moving rows (in `rewrites` and `moves`) carry a parking
   * position `parkedBelow − 1 − target`, below every current one, and a final statement moves
   * every row below `parkedBelow` to `parkedBelow − 1 − seq`.
   */
  parkedBelow: number | null;
  creates: ProjectedRow[];
  messageCount: number;
  /** The row count changes: a message added or removed is activity (`updated_at` moves). */
  countChanged: boolean;
}

/**
 * The writes that make `existing` (the session's rows in `seq` order from position `from` on)
 * the projection of `messages` (from message `from` on: the rows before it already are the
 * projection of the messages before it), following `planProjection` of `@cognition/storage`
 * (shared by every backend). Only rows whose columns or position differ are written. `lowest`
 * is the session's lowest `seq` (a hand-edited row may hold a negative one), null without rows.
 */
function planWrites(
  sessionId: string,
  existing: readonly StoredRow[],
  messages: readonly BaseMessage[],
  from: number,
  lowest: number | null,
): ProjectionWrites {
  const plan = planProjection(
    existing.map((row) => ({ id: row.id, pending: row.source !== 'checkpoint' })),
    projectCheckpointMessages(sessionId, messages, from),
    from,
  );
  const byId = new Map(existing.map((row) => [row.id, row]));
  // Below every current position.
  const floor = Math.min(0, lowest ?? 0);
  const writes: ProjectionWrites = {
    deleteIds: plan.deleteIds,
    rewrites: [],
    moves: [],
    parkedBelow: null,
    creates: [],
    messageCount: plan.messageCount,
    countChanged: plan.messageCount !== from + existing.length,
  };
  for (const planned of plan.rows) {
    const id = planned.kind === 'projected' ? planned.message.id : planned.id;
    const row = byId.get(id);
    const moved = row !== undefined && row.seq !== planned.seq;
    // Parked at a position unique to its target, so the unique (session_id, seq) index never
    // sees two rows on one position while rows trade places.
    const seq = moved ? floor - 1 - planned.seq : planned.seq;
    if (moved) writes.parkedBelow = floor;
    if (planned.kind === 'pending') {
      if (moved) writes.moves.push({ id, seq });
      continue;
    }
    const want = projectedRow(planned.message);
    if (!row) writes.creates.push(want);
    else if (moved || row.source !== 'checkpoint' || COMPARED.some((key) => row[key] !== want[key]))
      writes.rewrites.push({ ...want, seq });
  }
  return writes;
}

/**
 * Decides, once the session row is locked, from the thread's latest root checkpoint id, whether
 * the projection is written: false leaves the rows alone; throwing rolls the transaction back.
 */
export type ProjectionGate = (latestCheckpointId: string | null) => boolean;

/** Writes every time. */
export const ALWAYS: ProjectionGate = () => true;

/**
 * What to project: `messages` (see `checkpointMessages` of `@cognition/storage`) of root
 * checkpoint `checkpointId` (null: the thread has no checkpoint) onto the session owning
 * `threadId`, if `gate` agrees.
 *
 * The projection first locks the session row (on PostgreSQL a `FOR NO KEY UPDATE` lock, the one
 * an UPDATE takes: `messages.create` of the same session, which updates that row before choosing
 * its `seq`, waits for the rewrite instead of racing it for a position; on SQLite a no-op UPDATE,
 * which takes the database's write lock, so the reads after it are current even against another
 * process on the file), then reads the latest root checkpoint id of the thread and asks `gate`.
 * After it runs:
 * - one row per checkpoint message, id = LangChain message id, `seq` = position,
 *   `source = 'checkpoint'`; rows that already existed keep their `created_at`, new rows get now;
 * - `source = 'checkpoint'` rows no longer in the checkpoint are deleted;
 * - `source = 'direct'` rows not (yet) in the checkpoint (accepted user input the graph has not
 *   checkpointed) are kept, ordered after the checkpointed ones;
 * - `seq` is dense, `0 … count − 1`, whatever gaps or order the rows had before;
 * - `message_count` = row count and `projected_checkpoint_id` = `checkpointId`; `updated_at`
 *   moves to now when the count changed (the session's messages are its activity).
 * Only rows whose columns or position differ are written. It runs inside the caller's
 * transaction, so rows and checkpoint commit or roll back together, and returns the session's
 * message count, or null when the thread has no session or `gate` declined.
 */
export interface ProjectionRequest {
  threadId: string;
  checkpointId: string | null;
  messages: readonly BaseMessage[];
  gate: ProjectionGate;
  /**
   * The first `kept` of `messages` are those of checkpoint `checkpointId`: when the session's
   * rows are that checkpoint's projection (`projected_checkpoint_id`), only the rows from
   * position `kept` on are read and written, so a step costs what it changed, not the length
   * of the thread. Otherwise, or without it, every row is.
   */
  base?: { checkpointId: string; kept: number };
}

/**
 * The backend's `onRootCheckpoint` hook. A late write of a checkpoint older than the thread's
 * latest (a fork, a replay) must not replace the projection of the latest one; the latest id is
 * read after the session row is locked, so a concurrent put of a newer checkpoint that projected
 * first has committed, its checkpoint is seen, and this older one leaves the rows alone.
 */
export const messageProjectionHook: RootCheckpointHook = {
  sqlite: (session, put) => {
    projectOnSqlite(session, rootRequest(put));
  },
  postgresql: async (client, put) => {
    await projectOnPostgres(client, rootRequest(put));
  },
};

function rootRequest(put: RootCheckpoint): ProjectionRequest {
  const request: ProjectionRequest = {
    threadId: put.threadId,
    checkpointId: put.checkpointId,
    messages: checkpointMessages(put.checkpoint),
    gate: (latest) => isLatestCheckpointId(put.checkpointId, latest),
  };
  if (put.messagesBase) {
    // `kept` counts channel entries; the projection counts the messages among them.
    const raw = put.checkpoint.channel_values[MESSAGES_CHANNEL] as unknown[];
    const kept = checkpointMessages({
      channel_values: { [MESSAGES_CHANNEL]: raw.slice(0, put.messagesBase.kept) },
    }).length;
    request.base = { checkpointId: put.messagesBase.checkpointId, kept };
  }
  return request;
}

/**
 * Runs the projection in a transaction of its own on the connection under `db`, which must be a
 * client made by this library (see `raw-connections.ts`).
 */
export function writeProjection(db: PrismaDb, request: ProjectionRequest): Promise<number | null> {
  const raw = rawConnectionOf(db);
  if (raw?.provider === 'sqlite')
    return inSqliteTransaction(raw.connection, (session) => projectOnSqlite(session, request));
  if (raw?.provider === 'postgresql')
    return inPostgresTransaction(raw.pool, (client) => projectOnPostgres(client, request));
  return Promise.reject(
    new StorageError(
      'STORAGE_ERROR',
      'The message projection needs a Prisma client made by openSqlite/openPostgres or createSqliteHandle/createPostgresHandle',
    ),
  );
}

const STORED_COLUMNS = `m.id, m.seq, m.source, m.role, m.content, m.tool_calls, m.tool_call_id,
  m.token_count, m.model_used, m.parent_id, m.metadata`;

/**
 * The latest root checkpoint id, the session's lowest `seq` and its rows from position `from`
 * on, in one statement (the `(session_id, seq)` index serves both the minimum and the range).
 */
function latestAndRowsSql(thread: string, session: string, from: string): string {
  return `SELECT l.latest, f.lowest, ${STORED_COLUMNS}
    FROM (SELECT max(checkpoint_id) AS latest FROM checkpoints
      WHERE thread_id = ${thread} AND checkpoint_ns = '${ROOT_CHECKPOINT_NS}') l
    CROSS JOIN (SELECT min(seq) AS lowest FROM messages WHERE session_id = ${session}) f
    LEFT JOIN messages m ON m.session_id = ${session} AND m.seq >= ${from}
    ORDER BY m.seq`;
}

/** A row of {@link latestAndRowsSql}: the message columns are all null when there is none. */
type LatestAndRow = { latest: string | null; lowest: number | null } & (
  StoredRow | { [K in keyof StoredRow]: null }
);

function splitLatestAndRows(result: LatestAndRow[]): {
  latest: string | null;
  lowest: number | null;
  rows: StoredRow[];
} {
  const rows: StoredRow[] = [];
  for (const { latest: _, lowest: __, ...row } of result) if (row.id !== null) rows.push(row);
  return { latest: result[0]?.latest ?? null, lowest: result[0]?.lowest ?? null, rows };
}

/** The session row as the projection's lock returns it. */
interface LockedSession {
  id: string;
  projected_checkpoint_id: string | null;
}

/** The lowest `seq` a row can hold (the column is a 32-bit integer). */
const LOWEST_SEQ = -2147483648;

/**
 * The first message to project and the lowest row position to read: after the base's messages
 * when the rows are its projection, else every row (hand-edited ones may hold negative positions).
 */
function firstPosition(
  session: LockedSession,
  request: ProjectionRequest,
): { from: number; readFrom: number } {
  const base = request.base;
  return base && session.projected_checkpoint_id === base.checkpointId
    ? { from: base.kept, readFrom: base.kept }
    : { from: 0, readFrom: LOWEST_SEQ };
}

const SQLITE = {
  lock: `UPDATE sessions SET message_count = message_count WHERE thread_id = ?
    RETURNING id, projected_checkpoint_id`,
  read: latestAndRowsSql('@thread', '@session', '@from'),
  delete: 'DELETE FROM messages WHERE id = ?',
  rewrite: `UPDATE messages SET seq = @seq, role = @role, content = @content,
    tool_calls = @tool_calls, tool_call_id = @tool_call_id, token_count = @token_count,
    model_used = @model_used, parent_id = @parent_id, metadata = @metadata, source = 'checkpoint'
    WHERE id = @id`,
  move: 'UPDATE messages SET seq = ? WHERE id = ?',
  unpark: 'UPDATE messages SET seq = ? - seq WHERE session_id = ? AND seq < ?',
  create: `INSERT INTO messages (id, session_id, seq, role, content, tool_calls, tool_call_id,
      token_count, model_used, parent_id, metadata, source, created_at)
    VALUES (@id, @session, @seq, @role, @content, @tool_calls, @tool_call_id, @token_count,
      @model_used, @parent_id, @metadata, 'checkpoint', @now)`,
  session: `UPDATE sessions SET message_count = ?, projected_checkpoint_id = ? WHERE id = ?`,
  sessionTouched: `UPDATE sessions SET message_count = ?, projected_checkpoint_id = ?,
    updated_at = ?, last_activity_at = ? WHERE id = ?`,
};

/** How Prisma's SQLite adapter stores a DateTime (its default `iso8601` format). */
function sqliteTimestamp(date: Date): string {
  return date.toISOString().replace('Z', '+00:00');
}

/** The projection (see {@link ProjectionRequest}) inside the open transaction of `session`. */
export function projectOnSqlite(session: SqliteSession, request: ProjectionRequest): number | null {
  const locked = session.prepare<LockedSession>(SQLITE.lock).get(request.threadId);
  if (!locked) return null;
  const sessionId = locked.id;
  const { from, readFrom } = firstPosition(locked, request);
  const { latest, lowest, rows } = splitLatestAndRows(
    session
      .prepare<LatestAndRow>(SQLITE.read)
      .all({ thread: request.threadId, session: sessionId, from: readFrom }),
  );
  if (!request.gate(latest)) return null;
  const writes = planWrites(sessionId, rows, request.messages, from, lowest);
  if (writes.deleteIds.length > 0) {
    // Deleted rows free their positions before anything moves into them.
    const remove = session.prepare(SQLITE.delete);
    for (const id of writes.deleteIds) remove.run(id);
  }
  if (writes.rewrites.length > 0) {
    const rewrite = session.prepare(SQLITE.rewrite);
    for (const row of writes.rewrites) rewrite.run(row);
  }
  if (writes.moves.length > 0) {
    const move = session.prepare(SQLITE.move);
    for (const { id, seq } of writes.moves) move.run(seq, id);
  }
  // Every parked row goes to its target in one statement (floor − 1 − x inverts the parking):
  // the targets are distinct and no row that stayed holds one.
  if (writes.parkedBelow !== null) {
    const floor = writes.parkedBelow;
    session.prepare(SQLITE.unpark).run(floor - 1, sessionId, floor);
  }
  const now = sqliteTimestamp(new Date());
  if (writes.creates.length > 0) {
    const create = session.prepare(SQLITE.create);
    for (const row of writes.creates) create.run({ ...row, session: sessionId, now });
  }
  if (writes.countChanged)
    session
      .prepare(SQLITE.sessionTouched)
      .run(writes.messageCount, request.checkpointId, now, now, sessionId);
  else session.prepare(SQLITE.session).run(writes.messageCount, request.checkpointId, sessionId);
  return writes.messageCount;
}

/** A Date as PostgreSQL's `timestamp(3)` (without time zone) in UTC, as Prisma stores it. */
const PG_NOW = (param: string): string => `(${param}::timestamptz AT TIME ZONE 'UTC')`;

const PROJECTED_ARRAYS = `$1::text[], $2::int[], $3::text[], $4::text[], $5::text[],
  $6::text[], $7::int[], $8::text[], $9::text[], $10::text[]`;
const PROJECTED_NAMES = `id, seq, role, content, tool_calls, tool_call_id, token_count,
  model_used, parent_id, metadata`;

const POSTGRES_TEXT = {
  lock: `SELECT id, projected_checkpoint_id FROM sessions WHERE thread_id = $1
    FOR NO KEY UPDATE`,
  read: latestAndRowsSql('$1', '$2', '$3::int'),
  delete: 'DELETE FROM messages WHERE id = ANY($1::text[])',
  rewrite: `UPDATE messages m SET seq = v.seq, role = v.role, content = v.content,
      tool_calls = v.tool_calls, tool_call_id = v.tool_call_id, token_count = v.token_count,
      model_used = v.model_used, parent_id = v.parent_id, metadata = v.metadata,
      source = 'checkpoint'
    FROM unnest(${PROJECTED_ARRAYS}) AS v(${PROJECTED_NAMES})
    WHERE m.id = v.id`,
  move: `UPDATE messages m SET seq = v.seq
    FROM unnest($1::text[], $2::int[]) AS v(id, seq) WHERE m.id = v.id`,
  unpark: 'UPDATE messages SET seq = $1 - seq WHERE session_id = $2 AND seq < $3',
  create: `INSERT INTO messages (${PROJECTED_NAMES}, session_id, source, created_at)
    SELECT v.*, $11::text, 'checkpoint', ${PG_NOW('$12')}
    FROM unnest(${PROJECTED_ARRAYS}) AS v(${PROJECTED_NAMES})`,
  session: 'UPDATE sessions SET message_count = $1, projected_checkpoint_id = $2 WHERE id = $3',
  sessionTouched: `UPDATE sessions SET message_count = $1, projected_checkpoint_id = $2,
    updated_at = ${PG_NOW('$4')}, last_activity_at = ${PG_NOW('$4')} WHERE id = $3`,
};

/** Named (server-side prepared) statements: parsed and planned once per pooled connection. */
const POSTGRES = Object.fromEntries(
  Object.entries(POSTGRES_TEXT).map(([key, text]) => [
    key,
    { name: `cognition_projection_${key}`, text },
  ]),
) as Record<keyof typeof POSTGRES_TEXT, { name: string; text: string }>;

/** The columns of `rows` as the ten arrays `PROJECTED_ARRAYS` binds. */
function columnArrays(rows: readonly ProjectedRow[]): unknown[] {
  return [
    rows.map((row) => row.id),
    rows.map((row) => row.seq),
    rows.map((row) => row.role),
    rows.map((row) => row.content),
    rows.map((row) => row.tool_calls),
    rows.map((row) => row.tool_call_id),
    rows.map((row) => row.token_count),
    rows.map((row) => row.model_used),
    rows.map((row) => row.parent_id),
    rows.map((row) => row.metadata),
  ];
}

/** The projection (see {@link ProjectionRequest}) inside the open transaction of `client`. */
export async function projectOnPostgres(
  client: pg.ClientBase,
  request: ProjectionRequest,
): Promise<number | null> {
  const run = <Row extends pg.QueryResultRow>(
    statement: { name: string; text: string },
    values: unknown[],
  ): Promise<pg.QueryResult<Row>> => client.query<Row>({ ...statement, values });
  const [locked] = (await run<LockedSession>(POSTGRES.lock, [request.threadId])).rows;
  if (!locked) return null;
  const sessionId = locked.id;
  const { from, readFrom } = firstPosition(locked, request);
  const { latest, lowest, rows } = splitLatestAndRows(
    (await run<LatestAndRow>(POSTGRES.read, [request.threadId, sessionId, readFrom])).rows,
  );
  if (!request.gate(latest)) return null;
  const writes = planWrites(sessionId, rows, request.messages, from, lowest);
  // Deleted rows free their positions before anything moves into them.
  if (writes.deleteIds.length > 0) await run(POSTGRES.delete, [writes.deleteIds]);
  if (writes.rewrites.length > 0) await run(POSTGRES.rewrite, columnArrays(writes.rewrites));
  if (writes.moves.length > 0)
    await run(POSTGRES.move, [
      writes.moves.map((move) => move.id),
      writes.moves.map((move) => move.seq),
    ]);
  // As on SQLite: one statement moves every parked row to its target.
  if (writes.parkedBelow !== null) {
    const floor = writes.parkedBelow;
    await run(POSTGRES.unpark, [floor - 1, sessionId, floor]);
  }
  const now = new Date().toISOString();
  if (writes.creates.length > 0)
    await run(POSTGRES.create, [...columnArrays(writes.creates), sessionId, now]);
  if (writes.countChanged)
    await run(POSTGRES.sessionTouched, [writes.messageCount, request.checkpointId, sessionId, now]);
  else await run(POSTGRES.session, [writes.messageCount, request.checkpointId, sessionId]);
  return writes.messageCount;
}
