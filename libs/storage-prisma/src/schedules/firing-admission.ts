import { randomUUID } from 'node:crypto';
import type { Message, Run, Session } from '@cognition/contracts';
import type { AdmittedFiring, FiringAdmission, SessionPolicy } from '@cognition/storage';
import { StorageError } from '@cognition/storage';
import type pg from 'pg';
import { newRunUsageTotals, TOTALS_COLUMNS, TOTALS_UPDATE } from '../analytics/usage-upsert';
import type { RawConnection } from '../db/raw-connections';
import { inPostgresTransaction, inSqliteTransaction } from '../db/raw-connections';
import { sqliteTimestamp } from '../db/raw-select';
import type { SqliteSession } from '../db/sqlite-connection';
import { isRawUniqueViolation } from '../db/errors';
import { presentSession } from '../mapping';

/**
 * `ScheduleStore.admitFirings` on the driver: a pass's `new_session` firings admitted in one
 * transaction whatever their number. Per firing the rows a send to a fresh session writes —
 * the session (message count 1) with its scope and metadata rows, the `queued` run holding the
 * session (its pending input, its usage totals), the user message at position 0 — and the run
 * on the fire. The session id is derived from the occurrence: its insert is `ON CONFLICT (id)
 * DO NOTHING`, and only the firings whose session this statement inserted get a run, a message
 * and their fire updated, so an occurrence admitted before is left out, inside the statement.
 *
 * PostgreSQL: one statement of data-modifying CTEs over the firings as a JSON list (the
 * foreign keys are checked at its end, when the sessions are in). SQLite: one IMMEDIATE
 * transaction of prepared statements (in-process: a statement is a function call there).
 */

/** One firing as the statement reads it (dates as ISO text; JSON columns as text). */
interface FiringRow {
  schedule_id: string;
  due_at: string;
  cleanup: string;
  session_id: string;
  thread_id: string;
  agent_name: string;
  config: string;
  scopes: Record<string, string>;
  metadata: Record<string, string>;
  run_id: string;
  message_id: string;
  idempotency_key: string;
  callback_url: string | null;
  owner_node: string | null;
  lease_expires_at: string | null;
  pending_input: string;
  content: string;
  message_metadata: string;
  created_at: string;
  usage: unknown[];
}

const utc = (column: string) => `(${column} AT TIME ZONE 'UTC')`;

const POSTGRES_ADMIT = `WITH v AS (
    SELECT * FROM json_to_recordset($1::json) AS v(schedule_id text, due_at timestamptz,
      cleanup text, session_id text, thread_id text, agent_name text, config text, scopes json,
      metadata json, run_id text, message_id text, idempotency_key text, callback_url text,
      owner_node text, lease_expires_at timestamptz, pending_input text, content text,
      message_metadata text, created_at timestamptz, usage json)
  ),
  s AS (
    INSERT INTO sessions (id, thread_id, status, agent_name, config, message_count, version,
      last_activity_at, created_at, updated_at)
    SELECT session_id, thread_id, 'active', agent_name, config, 1, 1, ${utc('created_at')},
      ${utc('created_at')}, ${utc('created_at')}
    FROM v
    ON CONFLICT (id) DO NOTHING
    RETURNING id
  ),
  fresh AS (SELECT v.* FROM v JOIN s ON s.id = v.session_id),
  scopes AS (
    INSERT INTO session_scopes (session_id, key, value)
    SELECT fresh.session_id, kv.key, kv.value FROM fresh, json_each_text(fresh.scopes) AS kv
  ),
  meta AS (
    INSERT INTO session_metadata (session_id, key, value)
    SELECT fresh.session_id, kv.key, kv.value FROM fresh, json_each_text(fresh.metadata) AS kv
  ),
  r AS (
    INSERT INTO runs (id, session_id, status, active_session_id, input_message_id,
      idempotency_key, callback_url, pending_input, owner_node, lease_expires_at, created_at,
      updated_at)
    SELECT run_id, session_id, 'queued', session_id, message_id, idempotency_key, callback_url,
      pending_input, owner_node, ${utc('lease_expires_at')}, ${utc('created_at')},
      ${utc('created_at')}
    FROM fresh
    RETURNING session_id
  ),
  usage_totals AS (
    INSERT INTO session_usage (${TOTALS_COLUMNS})
    SELECT x.session_id, (u->>1)::int, (u->>2)::int, (u->>3)::int, (u->>4)::int, (u->>5)::int,
      (u->>6)::int, (u->>7)::int, (u->>8)::double precision, (u->>9)::int,
      ${utc('(u->>10)::timestamptz')}, ${utc('(u->>11)::timestamptz')},
      ${utc('(u->>12)::timestamptz')}, u->>13, u->>14
    FROM (SELECT r.session_id, fresh.usage AS u FROM r JOIN fresh
      ON fresh.session_id = r.session_id) AS x
    ${TOTALS_UPDATE}
  ),
  messages AS (
    INSERT INTO messages (id, session_id, seq, role, content, tool_calls, metadata, source,
      created_at)
    SELECT fresh.message_id, fresh.session_id, 0, 'user', fresh.content, '[]',
      fresh.message_metadata, 'direct', ${utc('fresh.created_at')}
    FROM r JOIN fresh ON fresh.session_id = r.session_id
  ),
  fires AS (
    UPDATE schedule_fires AS f
    SET run_id = fresh.run_id, session_id = fresh.session_id, cleanup = fresh.cleanup
    FROM r JOIN fresh ON fresh.session_id = r.session_id
    WHERE f.schedule_id = fresh.schedule_id AND f.due_at = ${utc('fresh.due_at')}
  )
  SELECT session_id FROM r`;

const SQLITE = {
  session: `INSERT INTO sessions (id, thread_id, status, agent_name, config, message_count,
      version, last_activity_at, created_at, updated_at)
    VALUES (?, ?, 'active', ?, ?, 1, 1, ?, ?, ?) ON CONFLICT (id) DO NOTHING`,
  scope: 'INSERT INTO session_scopes (session_id, key, value) VALUES (?, ?, ?)',
  metadata: 'INSERT INTO session_metadata (session_id, key, value) VALUES (?, ?, ?)',
  run: `INSERT INTO runs (id, session_id, status, active_session_id, input_message_id,
      idempotency_key, callback_url, pending_input, owner_node, lease_expires_at, created_at,
      updated_at)
    VALUES (?, ?, 'queued', ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
  usage: `INSERT INTO session_usage (${TOTALS_COLUMNS})
    VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?) ${TOTALS_UPDATE}`,
  message: `INSERT INTO messages (id, session_id, seq, role, content, tool_calls, metadata,
      source, created_at)
    VALUES (?, ?, 0, 'user', ?, '[]', ?, 'direct', ?)`,
  fire: `UPDATE schedule_fires SET run_id = ?, session_id = ?, cleanup = ?
    WHERE schedule_id = ? AND due_at = ?`,
};

/** What a firing becomes: its rows' values, and the objects the caller gets back. */
interface Planned {
  firing: FiringAdmission;
  threadId: string;
  createdAt: Date;
  run: Run;
  message: Message;
}

function plan(firing: FiringAdmission, createdAt: Date): Planned {
  const run: Run = {
    id: firing.run.id,
    sessionId: firing.session.id,
    status: 'queued',
    inputMessageId: firing.run.messageId,
    idempotencyKey: firing.run.idempotencyKey,
    multitaskStrategy: null,
    supersedesRunId: null,
    callbackUrl: firing.run.callbackUrl,
    callbackConfig: null,
    ownerNode: firing.run.ownerNode,
    leaseExpiresAt: firing.run.leaseExpiresAt,
    pendingAction: null,
    kwargs: null,
    startAfter: null,
    usage: null,
    error: null,
    createdAt,
    startedAt: null,
    finishedAt: null,
    updatedAt: createdAt,
  };
  const message: Message = {
    id: firing.run.messageId,
    sessionId: firing.session.id,
    role: 'user',
    content: firing.message.content,
    toolCalls: [],
    toolCallId: null,
    tokenCount: null,
    modelUsed: null,
    parentId: null,
    metadata: firing.message.metadata,
    createdAt,
  };
  return { firing, threadId: randomUUID(), createdAt, run, message };
}

function pendingInputOf(firing: FiringAdmission): string {
  return JSON.stringify({
    messageId: firing.run.messageId,
    content: firing.message.content,
    parentId: null,
    metadata: firing.message.metadata,
  });
}

function sessionOf(p: Planned, policy: SessionPolicy): Session {
  const { firing, createdAt } = p;
  const rows = (map: Record<string, string>) =>
    Object.entries(map).map(([key, value]) => ({ sessionId: firing.session.id, key, value }));
  return presentSession(
    {
      id: firing.session.id,
      threadId: p.threadId,
      title: null,
      status: 'active',
      agentName: firing.session.agentName,
      config: JSON.stringify(firing.session.config),
      messageCount: 1,
      version: 1,
      parentId: null,
      workspacePath: null,
      projectedCheckpointId: null,
      systemPrompt: null,
      task: null,
      endedAt: null,
      lastActivityAt: createdAt,
      expiresAt: null,
      checkpointRetention: null,
      createdAt,
      updatedAt: createdAt,
      scopes: rows(firing.scope),
      metadata: rows(firing.session.metadata),
    },
    policy,
  );
}

function toRow(p: Planned): FiringRow {
  const { firing } = p;
  return {
    schedule_id: firing.scheduleId,
    due_at: firing.dueAt.toISOString(),
    cleanup: firing.cleanup,
    session_id: firing.session.id,
    thread_id: p.threadId,
    agent_name: firing.session.agentName,
    config: JSON.stringify(firing.session.config),
    scopes: firing.scope,
    metadata: firing.session.metadata,
    run_id: firing.run.id,
    message_id: firing.run.messageId,
    idempotency_key: firing.run.idempotencyKey,
    callback_url: firing.run.callbackUrl,
    owner_node: firing.run.ownerNode,
    lease_expires_at: firing.run.leaseExpiresAt?.toISOString() ?? null,
    pending_input: pendingInputOf(firing),
    content: firing.message.content,
    message_metadata: JSON.stringify(firing.message.metadata),
    created_at: p.createdAt.toISOString(),
    usage: newRunUsageTotals(p.run, (d) => d.toISOString()),
  };
}

async function admitOnPostgres(pool: pg.Pool, planned: Planned[]): Promise<Set<string>> {
  // One statement; the transaction only gives it a client of its own to fail on.
  return inPostgresTransaction(pool, async (client) => {
    const res = await client.query<{ session_id: string }>(POSTGRES_ADMIT, [
      JSON.stringify(planned.map(toRow)),
    ]);
    return new Set(res.rows.map((r) => r.session_id));
  });
}

function admitOnSqlite(session: SqliteSession, planned: Planned[]): Set<string> {
  const admitted = new Set<string>();
  const ts = sqliteTimestamp;
  for (const p of planned) {
    const { firing, createdAt } = p;
    const id = firing.session.id;
    const inserted = session
      .prepare(SQLITE.session)
      .run(
        id,
        p.threadId,
        firing.session.agentName,
        JSON.stringify(firing.session.config),
        ts(createdAt),
        ts(createdAt),
        ts(createdAt),
      );
    if (inserted.changes === 0) continue;
    for (const [key, value] of Object.entries(firing.scope)) {
      session.prepare(SQLITE.scope).run(id, key, value);
    }
    for (const [key, value] of Object.entries(firing.session.metadata)) {
      session.prepare(SQLITE.metadata).run(id, key, value);
    }
    session
      .prepare(SQLITE.run)
      .run(
        firing.run.id,
        id,
        id,
        firing.run.messageId,
        firing.run.idempotencyKey,
        firing.run.callbackUrl,
        pendingInputOf(firing),
        firing.run.ownerNode,
        firing.run.leaseExpiresAt ? ts(firing.run.leaseExpiresAt) : null,
        ts(createdAt),
        ts(createdAt),
      );
    session.prepare(SQLITE.usage).run(...newRunUsageTotals(p.run, ts));
    session
      .prepare(SQLITE.message)
      .run(
        firing.run.messageId,
        id,
        firing.message.content,
        JSON.stringify(firing.message.metadata),
        ts(createdAt),
      );
    session
      .prepare(SQLITE.fire)
      .run(firing.run.id, id, firing.cleanup, firing.scheduleId, ts(firing.dueAt));
    admitted.add(id);
  }
  return admitted;
}

/** See the file comment. @throws StorageError CONFLICT when a row clashes (nothing stored). */
export async function admitFirings(
  raw: RawConnection,
  policy: SessionPolicy,
  firings: FiringAdmission[],
): Promise<AdmittedFiring[]> {
  if (firings.length === 0) return [];
  const createdAt = new Date();
  const planned = firings.map((f) => plan(f, createdAt));
  let admitted: Set<string>;
  try {
    admitted =
      raw.provider === 'postgresql'
        ? await admitOnPostgres(raw.pool, planned)
        : await inSqliteTransaction(raw.connection, (session) => admitOnSqlite(session, planned));
  } catch (error) {
    if (isRawUniqueViolation(error)) {
      throw new StorageError('CONFLICT', 'A firing clashes with a stored row', { cause: error });
    }
    throw error;
  }
  return planned
    .filter((p) => admitted.has(p.firing.session.id))
    .map((p) => ({
      scheduleId: p.firing.scheduleId,
      dueAt: p.firing.dueAt,
      session: sessionOf(p, policy),
      run: p.run,
      message: p.message,
    }));
}
