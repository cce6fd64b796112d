import {
  checkpointMessages,
  isLatestCheckpointId,
  MESSAGES_CHANNEL,
  StorageError,
} from '@cognition/storage';
import type pg from 'pg';
import type { PrismaDb } from '../db/db';
import type { RootCheckpoint, RootCheckpointHook } from '../langgraph/checkpoint-saver';
import { inPostgresTransaction, inSqliteTransaction, rawConnectionOf } from '../db/raw-connections';
import type { SqliteSession } from '../db/sqlite-connection';
import type { LatestAndRow, LockedSession, ProjectionRequest } from './projection-plan';
import { firstPosition, latestAndRowsSql, planWrites, splitLatestAndRows } from './projection-plan';
import {
  columnArrays,
  PG_NOW,
  planOnPostgres,
  projectedArrays,
  PROJECTED_NAMES,
} from './projection-ahead';

/**
 * The message projection's SQL. It runs on every root checkpoint put (~5 per turn), so it skips
 * Prisma's query engine, whose per-statement cost (the query compiler, row mapping, ~0.5 ms a
 * statement on PostgreSQL) was most of a put: on SQLite, prepared better-sqlite3 statements run
 * synchronously inside the put's transaction; on PostgreSQL, usually planned ahead and joined
 * to the put's own statement (`projection-ahead.ts`), else node-postgres named statements on the
 * client holding the put's transaction, one statement per kind of write whatever the number of
 * rows.
 */

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
  postgresqlPlan: (pool, put) => planOnPostgres(pool, rootRequest(put)),
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

const SQLITE = {
  lock: `UPDATE sessions SET message_count = message_count WHERE thread_id = ?
    RETURNING id, projected_checkpoint_id`,
  read: latestAndRowsSql('@thread', '@session', '@from'),
  delete: 'DELETE FROM messages WHERE session_id = ? AND id = ?',
  rewrite: `UPDATE messages SET seq = @seq, role = @role, content = @content,
    tool_calls = @tool_calls, tool_call_id = @tool_call_id, token_count = @token_count,
    model_used = @model_used, parent_id = @parent_id, metadata = @metadata, source = 'checkpoint'
    WHERE session_id = @session AND id = @id`,
  move: 'UPDATE messages SET seq = ? WHERE session_id = ? AND id = ?',
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
    for (const id of writes.deleteIds) remove.run(sessionId, id);
  }
  if (writes.rewrites.length > 0) {
    const rewrite = session.prepare(SQLITE.rewrite);
    for (const row of writes.rewrites) rewrite.run({ ...row, session: sessionId });
  }
  if (writes.moves.length > 0) {
    const move = session.prepare(SQLITE.move);
    for (const { id, seq } of writes.moves) move.run(seq, sessionId, id);
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

const PROJECTED_ARRAYS = projectedArrays(1);

const POSTGRES_TEXT = {
  lock: `SELECT id, projected_checkpoint_id FROM sessions WHERE thread_id = $1
    FOR NO KEY UPDATE`,
  read: latestAndRowsSql('$1', '$2', '$3::int'),
  delete: 'DELETE FROM messages WHERE session_id = $2::text AND id = ANY($1::text[])',
  rewrite: `UPDATE messages m SET seq = v.seq, role = v.role, content = v.content,
      tool_calls = v.tool_calls, tool_call_id = v.tool_call_id, token_count = v.token_count,
      model_used = v.model_used, parent_id = v.parent_id, metadata = v.metadata,
      source = 'checkpoint'
    FROM unnest(${PROJECTED_ARRAYS}) AS v(${PROJECTED_NAMES})
    WHERE m.session_id = $11::text AND m.id = v.id`,
  move: `UPDATE messages m SET seq = v.seq
    FROM unnest($1::text[], $2::int[]) AS v(id, seq) WHERE m.session_id = $3::text AND m.id = v.id`,
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
  if (writes.deleteIds.length > 0) await run(POSTGRES.delete, [writes.deleteIds, sessionId]);
  if (writes.rewrites.length > 0)
    await run(POSTGRES.rewrite, [...columnArrays(writes.rewrites), sessionId]);
  if (writes.moves.length > 0)
    await run(POSTGRES.move, [
      writes.moves.map((move) => move.id),
      writes.moves.map((move) => move.seq),
      sessionId,
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
