import type { Run } from '@cognition/contracts';
import { holdsSession } from '@cognition/contracts';
import {
  applyRunUsageOnPostgres,
  applyRunUsageOnSqlite,
  pgTimestamp,
} from '../analytics/usage-upsert';
import type { RawConnection } from '../db/raw-connections';
import { inPostgresTransaction, inSqliteTransaction } from '../db/raw-connections';
import { sqliteTimestamp } from '../db/raw-select';
import type { RawRunRow } from './run-reads';
import { fromRaw, POSTGRES_COLUMNS, SQLITE_COLUMNS } from './run-reads';

/**
 * The run writes of every turn (create, then start and finish through `update`) as one
 * transaction of prepared statements on the driver: a turn made about 25 Prisma statements
 * here, each compiled anew by Prisma 6.19 (~1 ms of CPU apiece). The same rows and the same
 * usage figures as the Prisma transaction `settlePaused` still runs (analytics/usage-records.ts);
 * the store translates the drivers' errors (unique and foreign-key violations) the same way it
 * translates Prisma's.
 */

/** A new run row (what `runs.create` inserts). */
export interface NewRunRow {
  id: string;
  sessionId: string;
  status: string;
  activeSessionId: string | null;
  inputMessageId: string | null;
  idempotencyKey: string | null;
  multitaskStrategy: string | null;
  supersedesRunId: string | null;
  callbackUrl: string | null;
  callbackConfig: string | null;
  pendingInput: string | null;
  kwargs: string | null;
  ownerNode: string | null;
  leaseExpiresAt: Date | null;
  createdAt: Date;
  startedAt: Date | null;
  updatedAt: Date;
}

/** The columns `runs.update` may set; absent keys keep their value. */
export interface RunPatch {
  updatedAt: Date;
  status?: string;
  usage?: string | null;
  error?: string | null;
  startedAt?: Date | null;
  finishedAt?: Date | null;
  baseCheckpointId?: string | null;
  pendingAction?: string | null;
  callbackUrl?: string | null;
  callbackConfig?: string | null;
}

const INSERT_COLUMNS = `id, session_id, status, active_session_id, input_message_id,
  idempotency_key, multitask_strategy, supersedes_run_id, callback_url, callback_config,
  pending_input, kwargs, owner_node, lease_expires_at, created_at, started_at, updated_at`;

const INSERT = {
  sqlite: `INSERT INTO runs (${INSERT_COLUMNS})
    VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?) RETURNING ${SQLITE_COLUMNS}`,
  postgres: `INSERT INTO runs (${INSERT_COLUMNS})
    VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, ${pgTimestamp('$14')},
      ${pgTimestamp('$15')}, ${pgTimestamp('$16')}, ${pgTimestamp('$17')})
    RETURNING ${POSTGRES_COLUMNS}`,
};

const CURRENT = {
  sqlite: `SELECT ${SQLITE_COLUMNS} FROM runs WHERE id = ?`,
  // The row lock of the Prisma path's `lockRunRow` and its read, in one statement.
  postgres: `SELECT ${POSTGRES_COLUMNS} FROM runs WHERE id = $1 FOR UPDATE`,
};

type Dated = (date: Date) => unknown;

function insertValues(row: NewRunRow, date: Dated): unknown[] {
  return [
    row.id,
    row.sessionId,
    row.status,
    row.activeSessionId,
    row.inputMessageId,
    row.idempotencyKey,
    row.multitaskStrategy,
    row.supersedesRunId,
    row.callbackUrl,
    row.callbackConfig,
    row.pendingInput,
    row.kwargs,
    row.ownerNode,
    row.leaseExpiresAt === null ? null : date(row.leaseExpiresAt),
    date(row.createdAt),
    row.startedAt === null ? null : date(row.startedAt),
    date(row.updatedAt),
  ];
}

/** Inserts the run and adds it to its session's usage records, in one transaction. */
export function insertRunRaw(raw: RawConnection, row: NewRunRow): Promise<Run> {
  if (raw.provider === 'sqlite') {
    return inSqliteTransaction(raw.connection, (session) => {
      const inserted = session
        .prepare<RawRunRow>(INSERT.sqlite)
        .get(...insertValues(row, sqliteTimestamp)) as RawRunRow;
      const run = fromRaw(inserted);
      applyRunUsageOnSqlite(session, null, run);
      return run;
    });
  }
  return inPostgresTransaction(raw.pool, async (client) => {
    const result = await client.query<RawRunRow>({
      name: 'cognition_run_insert',
      text: INSERT.postgres,
      values: insertValues(row, (date) => date),
    });
    const run = fromRaw(result.rows[0] as RawRunRow);
    await applyRunUsageOnPostgres(client, null, run);
    return run;
  });
}

/** The patch's keys in a fixed order, with their columns; dates are converted per provider. */
const PATCH_COLUMNS = [
  ['updatedAt', 'updated_at', true],
  ['status', 'status', false],
  ['usage', 'usage', false],
  ['error', 'error', false],
  ['startedAt', 'started_at', true],
  ['finishedAt', 'finished_at', true],
  ['baseCheckpointId', 'base_checkpoint_id', false],
  ['pendingAction', 'pending_action', false],
  ['callbackUrl', 'callback_url', false],
  ['callbackConfig', 'callback_config', false],
] as const;

interface PatchStatement {
  /** Bit i set: PATCH_COLUMNS[i] is written. */
  mask: number;
  sqlite: string;
  postgres: string;
}

const patchStatements = new Map<number, PatchStatement>();

/** The UPDATE for the keys present in `patch` (status also sets `active_session_id`). */
function patchStatement(patch: RunPatch): PatchStatement {
  let mask = 0;
  PATCH_COLUMNS.forEach(([key], i) => {
    if (patch[key] !== undefined) mask |= 1 << i;
  });
  let statement = patchStatements.get(mask);
  if (!statement) {
    const sqlite: string[] = [];
    const postgres: string[] = [];
    PATCH_COLUMNS.forEach(([, column, isDate], i) => {
      if ((mask & (1 << i)) === 0) return;
      sqlite.push(`${column} = ?`);
      const param = `$${postgres.length + 1}`;
      postgres.push(`${column} = ${isDate ? pgTimestamp(param) : param}`);
      if (column === 'status') {
        sqlite.push('active_session_id = ?');
        postgres.push(`active_session_id = $${postgres.length + 1}`);
      }
    });
    statement = {
      mask,
      sqlite: `UPDATE runs SET ${sqlite.join(', ')} WHERE id = ? RETURNING ${SQLITE_COLUMNS}`,
      postgres: `UPDATE runs SET ${postgres.join(', ')} WHERE id = $${postgres.length + 1}
        RETURNING ${POSTGRES_COLUMNS}`,
    };
    patchStatements.set(mask, statement);
  }
  return statement;
}

function patchValues(patch: RunPatch, current: RawRunRow, date: Dated): unknown[] {
  const values: unknown[] = [];
  for (const [key, column, isDate] of PATCH_COLUMNS) {
    const value = patch[key];
    if (value === undefined) continue;
    values.push(isDate && value instanceof Date ? date(value) : value);
    if (column === 'status') {
      // Active (or paused for a decision) runs hold their session under the unique index.
      values.push(holdsSession(value as Run['status']) ? current.session_id : null);
    }
  }
  values.push(current.id);
  return values;
}

/**
 * Updates the run (its row locked first on PostgreSQL; SQLite transactions are serialised)
 * and replaces its contribution to the session's usage records, in one transaction. `null`
 * when there is no such run.
 */
export function updateRunRaw(raw: RawConnection, id: string, patch: RunPatch): Promise<Run | null> {
  const statement = patchStatement(patch);
  if (raw.provider === 'sqlite') {
    return inSqliteTransaction(raw.connection, (session) => {
      const current = session.prepare<RawRunRow>(CURRENT.sqlite).get(id);
      if (!current) return null;
      const updated = fromRaw(
        session
          .prepare<RawRunRow>(statement.sqlite)
          .get(...patchValues(patch, current, sqliteTimestamp)) as RawRunRow,
      );
      applyRunUsageOnSqlite(session, fromRaw(current), updated);
      return updated;
    });
  }
  return inPostgresTransaction(raw.pool, async (client) => {
    const read = await client.query<RawRunRow>({
      name: 'cognition_run_lock',
      text: CURRENT.postgres,
      values: [id],
    });
    const current = read.rows[0];
    if (!current) return null;
    const written = await client.query<RawRunRow>({
      name: `cognition_run_update_${statement.mask}`,
      text: statement.postgres,
      values: patchValues(patch, current, (date) => date),
    });
    const updated = fromRaw(written.rows[0] as RawRunRow);
    await applyRunUsageOnPostgres(client, fromRaw(current), updated);
    return updated;
  });
}
