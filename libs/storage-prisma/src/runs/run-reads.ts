import type { Run } from '@cognition/contracts';
import type { RawSelect } from '../db/raw-select';
import type { RawConnection } from '../db/raw-connections';
import { pgUtc, rawDate, rawDateOrNull, rawSelect } from '../db/raw-select';
import { toRun } from '../mapping';

/**
 * The run reads a turn makes several times (the send, the event subscription, the executor,
 * the finisher) as prepared statements on the driver instead of Prisma queries. The same
 * rows, mapped by the same `toRun`.
 */
export const SQLITE_COLUMNS = `id, session_id, status, input_message_id, idempotency_key,
  multitask_strategy, supersedes_run_id, callback_url, callback_config, owner_node, lease_expires_at,
  lease_attempt, pending_action, kwargs, usage, error, created_at, started_at, finished_at, updated_at,
  start_after`;
export const POSTGRES_COLUMNS = `id, session_id, status, input_message_id, idempotency_key,
  multitask_strategy, supersedes_run_id, callback_url, callback_config, owner_node,
  ${pgUtc('lease_expires_at')}, lease_attempt,
  pending_action, kwargs, usage, error, ${pgUtc('created_at')}, ${pgUtc('started_at')},
  ${pgUtc('finished_at')}, ${pgUtc('updated_at')}, ${pgUtc('start_after')}`;

function select(name: string, where: { sqlite: string; postgres: string }): RawSelect {
  return {
    name: `cognition_runs_${name}`,
    sqlite: `SELECT ${SQLITE_COLUMNS} FROM runs WHERE ${where.sqlite}`,
    postgres: `SELECT ${POSTGRES_COLUMNS} FROM runs WHERE ${where.postgres}`,
  };
}

export const RUN_READS = {
  byId: select('by_id', { sqlite: 'id = ?', postgres: 'id = $1' }),
  bySession: select('by_session', {
    sqlite: 'session_id = ? ORDER BY created_at DESC, id DESC',
    postgres: 'session_id = $1 ORDER BY created_at DESC, id DESC',
  }),
  active: select('active', { sqlite: 'active_session_id = ?', postgres: 'active_session_id = $1' }),
  byKey: select('by_key', {
    sqlite: 'session_id = ? AND idempotency_key = ?',
    postgres: 'session_id = $1 AND idempotency_key = $2',
  }),
  // Oldest first: the order in which queued inputs are promoted.
  pendingOfSession: select('pending_of_session', {
    sqlite: "status = 'pending' AND session_id = ? ORDER BY created_at ASC, id ASC",
    postgres: "status = 'pending' AND session_id = $1 ORDER BY created_at ASC, id ASC",
  }),
  // `active` and `pendingOfSession` at once (an active run's active_session_id is its session).
  activeAndPending: select('active_and_pending', {
    sqlite: `session_id = ? AND (active_session_id IS NOT NULL OR status = 'pending')
      ORDER BY created_at ASC, id ASC`,
    postgres: `session_id = $1 AND (active_session_id IS NOT NULL OR status = 'pending')
      ORDER BY created_at ASC, id ASC`,
  }),
  pending: select('pending', {
    sqlite: "status = 'pending' ORDER BY created_at ASC, id ASC",
    postgres: "status = 'pending' ORDER BY created_at ASC, id ASC",
  }),
} as const;

export interface RawRunRow {
  id: string;
  session_id: string;
  status: string;
  input_message_id: string | null;
  idempotency_key: string | null;
  multitask_strategy: string | null;
  supersedes_run_id: string | null;
  callback_url: string | null;
  callback_config: string | null;
  owner_node: string | null;
  lease_expires_at: unknown;
  /** The claim number (run fencing): not part of `Run`. */
  lease_attempt?: number;
  pending_action: string | null;
  kwargs: string | null;
  usage: string | null;
  error: string | null;
  created_at: unknown;
  started_at: unknown;
  finished_at: unknown;
  updated_at: unknown;
  start_after: unknown;
}

export function fromRaw(row: RawRunRow): Run {
  return toRun({
    id: row.id,
    sessionId: row.session_id,
    status: row.status,
    inputMessageId: row.input_message_id,
    idempotencyKey: row.idempotency_key,
    multitaskStrategy: row.multitask_strategy,
    supersedesRunId: row.supersedes_run_id,
    callbackUrl: row.callback_url,
    callbackConfig: row.callback_config,
    ownerNode: row.owner_node,
    leaseExpiresAt: rawDateOrNull(row.lease_expires_at),
    pendingAction: row.pending_action,
    kwargs: row.kwargs,
    usage: row.usage,
    error: row.error,
    createdAt: rawDate(row.created_at),
    startedAt: rawDateOrNull(row.started_at),
    finishedAt: rawDateOrNull(row.finished_at),
    updatedAt: rawDate(row.updated_at),
    startAfter: rawDateOrNull(row.start_after),
  });
}

/** Runs of `read` on the driver. */
export async function readRuns(
  raw: RawConnection,
  read: RawSelect,
  values: readonly unknown[],
): Promise<Run[]> {
  const rows = await rawSelect<RawRunRow>(raw, read, values);
  return rows.map(fromRaw);
}
