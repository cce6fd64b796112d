import type { Run, RunStatus } from '@cognition/contracts';
import type { RunFence } from '@cognition/storage';
import { RunFencedError } from '@cognition/storage';
import { holdsSession } from '@cognition/contracts';
import type pg from 'pg';
import {
  applyRunUsageOnPostgres,
  pgTimestamp,
  postgresUsageCtes,
  postgresUsageValues,
} from '../analytics/usage-upsert';
import { inPostgresTransaction } from '../db/raw-connections';
import type { RawRunRow } from './run-reads';
import { fromRaw, POSTGRES_COLUMNS } from './run-reads';
import type { NewRunRow, PatchStatement, RunPatch } from './run-statements';
import {
  applyPatch,
  CURRENT,
  INSERT,
  insertValues,
  patchStatement,
  patchValues,
} from './run-statements';

/**
 * The run writes of a turn on PostgreSQL, where every statement is a network round trip. The
 * create, start and finish were transactions of 4–6 statements (BEGIN, the locked read, the
 * update, the usage increments, COMMIT); each is now one statement in the usual case:
 *
 * - the create inserts the run and its usage in one statement of data-modifying CTEs (nothing
 *   is read, so nothing needs a guard);
 * - an update writes the run and the difference of its usage contribution in one statement
 *   guarded by the row's `xmin` (the transaction that wrote the version read): the statement
 *   writes only while the row is the version the contribution was computed from. Every change
 *   of a row gives it a new `xmin` (a lease renewal, a claim, another node's update), and an
 *   UPDATE that waited for a concurrent writer re-checks its condition on the version that
 *   writer left, so a stale read never reaches the usage records. The version comes from this
 *   store's last write of the run (`RunVersions`: the create's or the previous update's
 *   `RETURNING`), else from one unlocked read. When the guard fails, nothing was written and the
 *   locked transaction runs as before.
 */

/** A row as this store last wrote or read it, with its `xmin`. */
interface VersionedRow {
  row: RawRunRow;
  version: string;
}

/** What the statements read back: the run's columns and the version they form. */
export const RETURNING = `${POSTGRES_COLUMNS}, xmin::text AS row_version`;

export type VersionedRawRow = RawRunRow & { row_version: string };

export function split(returned: VersionedRawRow): VersionedRow {
  const { row_version: version, ...row } = returned;
  return { row, version };
}

/**
 * The versions of the unfinished runs this store wrote last, most recent last: a turn's start
 * and finish follow its create on the same node, so they need no read. Bounded (the runs in
 * flight on a node are far fewer); an evicted or missing entry costs one read, a stale one a
 * failed guard.
 */
export class RunVersions {
  private readonly rows = new Map<string, VersionedRow>();

  constructor(private readonly capacity = 1_000) {}

  get(id: string): VersionedRow | undefined {
    return this.rows.get(id);
  }

  /** Keeps `entry` while its run may still change; a finished run's entry goes. */
  set(id: string, entry: VersionedRow): void {
    this.rows.delete(id);
    const status = entry.row.status as RunStatus;
    // A finished run is seldom written again (one read then, if it is).
    if (status !== 'pending' && !holdsSession(status)) return;
    this.rows.set(id, entry);
    if (this.rows.size > this.capacity) {
      const oldest = this.rows.keys().next().value;
      if (oldest !== undefined) this.rows.delete(oldest);
    }
  }

  delete(id: string): void {
    this.rows.delete(id);
  }
}

const INSERT_WITH_USAGE = (() => {
  const usage = postgresUsageCtes('inserted', 19);
  return `WITH inserted AS (${INSERT.postgres} RETURNING ${RETURNING}),
    ${usage.sql}
    SELECT * FROM inserted`;
})();

/** Inserts the run and adds it to its session's usage records: one statement. */
export async function insertRunOnPostgres(
  pool: pg.Pool,
  versions: RunVersions,
  row: NewRunRow,
): Promise<Run> {
  const values = insertValues(row, (date) => date);
  // The usage of a new run follows from the row alone; its run is the row as inserted.
  const run = fromRaw({
    id: row.id,
    session_id: row.sessionId,
    status: row.status,
    input_message_id: row.inputMessageId,
    idempotency_key: row.idempotencyKey,
    multitask_strategy: row.multitaskStrategy,
    supersedes_run_id: row.supersedesRunId,
    callback_url: row.callbackUrl,
    callback_config: row.callbackConfig,
    owner_node: row.ownerNode,
    lease_expires_at: row.leaseExpiresAt,
    lease_attempt: 0,
    pending_action: null,
    kwargs: row.kwargs,
    usage: null,
    error: null,
    created_at: row.createdAt,
    started_at: row.startedAt,
    finished_at: null,
    updated_at: row.updatedAt,
    start_after: row.startAfter,
  });
  const result = await pool.query<VersionedRawRow>({
    name: 'cognition_run_insert_with_usage',
    text: INSERT_WITH_USAGE,
    values: [...values, ...postgresUsageValues(null, run)],
  });
  const inserted = split(result.rows[0] as VersionedRawRow);
  versions.set(row.id, inserted);
  return fromRaw(inserted.row);
}

const READ_VERSIONED = {
  name: 'cognition_run_read_versioned',
  text: `SELECT ${RETURNING} FROM runs WHERE id = $1`,
};

const guardedStatements = new Map<number, string>();

/** The patch's UPDATE guarded by `xmin`, with the usage CTEs, as one statement. */
function guardedText(statement: PatchStatement): string {
  let text = guardedStatements.get(statement.mask);
  if (text === undefined) {
    const id = statement.postgresParams + 1;
    const usage = postgresUsageCtes('updated', id + 2);
    text = `WITH updated AS (
        UPDATE runs SET ${statement.postgresSet} WHERE id = $${id} AND xmin = $${id + 1}::xid
        RETURNING ${RETURNING}
      ),
      ${usage.sql}
      SELECT * FROM updated`;
    guardedStatements.set(statement.mask, text);
  }
  return text;
}

/** Whether `row` is held under `fence` (none: always). */
export function fenceHolds(row: RawRunRow, fence: RunFence | undefined): boolean {
  return (
    fence === undefined ||
    (row.owner_node === fence.ownerNode && Number(row.lease_attempt ?? 0) === fence.claim)
  );
}

/**
 * Updates the run and replaces its contribution to the session's usage records. One statement
 * when the version this store holds (or reads) is still the row's; otherwise the locked
 * transaction. `null` when there is no such run.
 *
 * With a fence, the guarded statement runs only when the version it is guarded by holds the
 * fence (the statement then writes exactly that version, so the fence held when it wrote; no
 * parameter more); otherwise the locked transaction checks the fence on the locked row and
 * refuses (RunFencedError) without writing.
 */
export async function updateRunOnPostgres(
  pool: pg.Pool,
  versions: RunVersions,
  id: string,
  patch: RunPatch,
  fence?: RunFence,
): Promise<Run | null> {
  const statement = patchStatement(patch);
  let known = versions.get(id);
  if (known === undefined) {
    const read = await pool.query<VersionedRawRow>({ ...READ_VERSIONED, values: [id] });
    const found = read.rows[0];
    if (!found) return null;
    known = split(found);
  }
  if (!fenceHolds(known.row, fence)) {
    versions.delete(id);
    return updateLocked(pool, versions, id, patch, statement, fence);
  }
  const before = fromRaw(known.row);
  const after = fromRaw(applyPatch(known.row, patch));
  const guarded = await pool.query<VersionedRawRow>({
    name: `cognition_run_update_guarded_${statement.mask}`,
    text: guardedText(statement),
    values: [
      ...patchValues(patch, known.row, (date) => date),
      known.version,
      ...postgresUsageValues(before, after),
    ],
  });
  const written = guarded.rows[0];
  if (written) {
    const entry = split(written);
    versions.set(id, entry);
    return fromRaw(entry.row);
  }
  // The row changed since the version was taken (or is gone): nothing was written.
  versions.delete(id);
  return updateLocked(pool, versions, id, patch, statement, fence);
}

/** The transaction: the row locked and read, updated, its usage replaced. */
function updateLocked(
  pool: pg.Pool,
  versions: RunVersions,
  id: string,
  patch: RunPatch,
  statement: PatchStatement,
  fence: RunFence | undefined,
): Promise<Run | null> {
  return inPostgresTransaction(pool, async (client) => {
    const read = await client.query<RawRunRow>({
      name: 'cognition_run_lock',
      text: CURRENT.postgres,
      values: [id],
    });
    const current = read.rows[0];
    if (!current) return null;
    if (!fenceHolds(current, fence)) throw new RunFencedError([id]);
    const written = await client.query<VersionedRawRow>({
      name: `cognition_run_update_${statement.mask}`,
      text: `UPDATE runs SET ${statement.postgresSet} WHERE id = $${statement.postgresParams + 1}
        RETURNING ${RETURNING}`,
      values: patchValues(patch, current, (date) => date),
    });
    const entry = split(written.rows[0] as VersionedRawRow);
    const updated = fromRaw(entry.row);
    await applyRunUsageOnPostgres(client, fromRaw(current), updated);
    // Cached only once committed: a rolled-back write's version never existed.
    return { updated, entry };
  }).then((result) => {
    if (result === null) return null;
    versions.set(id, result.entry);
    return result.updated;
  });
}

/**
 * A run's usage carried by an event append (`EventStore.append`'s `usage`): the guarded update
 * of `updateRunOnPostgres` as CTEs of the append's statement, so the events and the run's
 * bookkeeping are one round trip. `carried` updates the run (as of the version this store
 * holds, unless the append's `refused` CTE refused the run) and answers its new `xmin`; the
 * usage CTEs write only when it did. Null when this store holds no version of the run, or the
 * one it holds is not under `fence`: the caller then updates the run after the append.
 */
export function carriedUsageCtes(
  versions: RunVersions,
  id: string,
  patch: RunPatch,
  fence: RunFence | undefined,
  first: number,
): { sql: string; values: unknown[]; written: (version: string) => void } | null {
  const known = versions.get(id);
  if (known === undefined || !fenceHolds(known.row, fence) || patch.usage === undefined) {
    return null;
  }
  const p = (i: number): string => `$${first + i}`;
  const usage = postgresUsageCtes('carried', first + 4);
  const after = applyPatch(known.row, patch);
  return {
    sql: `carried AS (
        UPDATE runs SET updated_at = ${pgTimestamp(p(0))}, usage = ${p(1)}
        WHERE id = ${p(2)} AND xmin = ${p(3)}::xid
          AND NOT EXISTS (SELECT 1 FROM refused x WHERE x.run_id = ${p(2)})
        RETURNING xmin::text AS row_version
      ),
      ${usage.sql}`,
    values: [
      patch.updatedAt,
      patch.usage,
      id,
      known.version,
      ...postgresUsageValues(fromRaw(known.row), fromRaw(after)),
    ],
    written: (version) => versions.set(id, { row: after, version }),
  };
}
