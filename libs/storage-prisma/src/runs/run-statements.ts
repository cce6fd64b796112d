import type { Run, Usage } from '@cognition/contracts';
import { holdsSession } from '@cognition/contracts';
import { pgTimestamp } from '../analytics/usage-upsert';
import type { RawRunRow } from './run-reads';
import { POSTGRES_COLUMNS, SQLITE_COLUMNS } from './run-reads';

/**
 * The statements of the run writes (run-writes.ts on SQLite, run-writes-postgres.ts on
 * PostgreSQL): the insert of a new run and the UPDATE of a patch, with their values.
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
  startAfter: Date | null;
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

/** The patch of `runs.update(id, { usage })` (a running run's usage so far). */
export function usagePatch(usage: Usage): RunPatch {
  return { updatedAt: new Date(), usage: JSON.stringify(usage) };
}

export const INSERT_COLUMNS = `id, session_id, status, active_session_id, input_message_id,
  idempotency_key, multitask_strategy, supersedes_run_id, callback_url, callback_config,
  pending_input, kwargs, owner_node, lease_expires_at, created_at, started_at, updated_at,
  start_after`;

export const INSERT = {
  sqlite: `INSERT INTO runs (${INSERT_COLUMNS})
    VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?) RETURNING ${SQLITE_COLUMNS}`,
  /** Without RETURNING: run-writes-postgres.ts adds what it reads back. Parameters $1…$18. */
  postgres: `INSERT INTO runs (${INSERT_COLUMNS})
    VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, ${pgTimestamp('$14')},
      ${pgTimestamp('$15')}, ${pgTimestamp('$16')}, ${pgTimestamp('$17')}, ${pgTimestamp('$18')})`,
};

export const CURRENT = {
  sqlite: `SELECT ${SQLITE_COLUMNS} FROM runs WHERE id = ?`,
  // The row lock of the Prisma path's `lockRunRow` and its read, in one statement.
  postgres: `SELECT ${POSTGRES_COLUMNS} FROM runs WHERE id = $1 FOR UPDATE`,
};

export type Dated = (date: Date) => unknown;

export function insertValues(row: NewRunRow, date: Dated): unknown[] {
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
    row.startAfter === null ? null : date(row.startAfter),
  ];
}

/** The patch's keys in a fixed order, with their columns; dates are converted per provider. */
export const PATCH_COLUMNS = [
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

export interface PatchStatement {
  /** Bit i set: PATCH_COLUMNS[i] is written. */
  mask: number;
  sqlite: string;
  /** PostgreSQL's SET list, on parameters $1…$n; the run's id is $n+1 (`patchValues`). */
  postgresSet: string;
  /** n: the parameters of `postgresSet`. */
  postgresParams: number;
}

const patchStatements = new Map<number, PatchStatement>();

/** The UPDATE for the keys present in `patch` (status also sets `active_session_id`). */
export function patchStatement(patch: RunPatch): PatchStatement {
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
      postgresSet: postgres.join(', '),
      postgresParams: postgres.length,
    };
    patchStatements.set(mask, statement);
  }
  return statement;
}

export function patchValues(patch: RunPatch, current: RawRunRow, date: Dated): unknown[] {
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
 * The row `current` becomes under `patch`, computed here instead of read back: the guarded
 * PostgreSQL update needs the run's usage contribution after the write before it writes.
 */
export function applyPatch(current: RawRunRow, patch: RunPatch): RawRunRow {
  const next: RawRunRow = { ...current };
  for (const [key, column] of PATCH_COLUMNS) {
    const value = patch[key];
    if (value !== undefined) (next as unknown as Record<string, unknown>)[column] = value;
  }
  return next;
}
