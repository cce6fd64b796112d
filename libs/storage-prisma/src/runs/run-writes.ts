import type { Run } from '@cognition/contracts';
import type { RunFence } from '@cognition/storage';
import { RunFencedError } from '@cognition/storage';
import { applyRunUsageOnSqlite } from '../analytics/usage-upsert';
import type { RawConnection } from '../db/raw-connections';
import { inSqliteTransaction } from '../db/raw-connections';
import { sqliteTimestamp } from '../db/raw-select';
import type { SqliteSession } from '../db/sqlite-connection';
import type { RawRunRow } from './run-reads';
import { fromRaw } from './run-reads';
import type { NewRunRow, RunPatch } from './run-statements';
import { CURRENT, INSERT, insertValues, patchStatement, patchValues } from './run-statements';
import type { RunVersions } from './run-writes-postgres';
import { fenceHolds, insertRunOnPostgres, updateRunOnPostgres } from './run-writes-postgres';

/**
 * The run writes of every turn (create, then start and finish through `update`) as prepared
 * statements on the driver: a turn made about 25 Prisma statements here, each compiled anew by
 * Prisma 6.19 (~1 ms of CPU apiece). On SQLite one transaction each; on PostgreSQL one
 * statement each in the usual case (run-writes-postgres.ts). The same rows and the same usage
 * figures as the Prisma transaction `settlePaused` still runs (analytics/usage-records.ts); the
 * store translates the drivers' errors (unique and foreign-key violations) the same way it
 * translates Prisma's.
 */

/** Inserts the run and adds it to its session's usage records, atomically. */
export function insertRunRaw(
  raw: RawConnection,
  versions: RunVersions,
  row: NewRunRow,
): Promise<Run> {
  if (raw.provider === 'postgresql') return insertRunOnPostgres(raw.pool, versions, row);
  return inSqliteTransaction(raw.connection, (session) => {
    const inserted = session
      .prepare<RawRunRow>(INSERT.sqlite)
      .get(...insertValues(row, sqliteTimestamp)) as RawRunRow;
    const run = fromRaw(inserted);
    applyRunUsageOnSqlite(session, null, run);
    return run;
  });
}

/**
 * Updates the run and replaces its contribution to the session's usage records, atomically
 * (SQLite transactions are serialised; PostgreSQL's write is guarded or locked). `null` when
 * there is no such run.
 */
export function updateRunRaw(
  raw: RawConnection,
  versions: RunVersions,
  id: string,
  patch: RunPatch,
  fence?: RunFence,
): Promise<Run | null> {
  if (raw.provider === 'postgresql') {
    return updateRunOnPostgres(raw.pool, versions, id, patch, fence);
  }
  return inSqliteTransaction(raw.connection, (session) =>
    updateRunOnSqlite(session, id, patch, fence),
  );
}

/** `updateRunRaw` on SQLite, inside `session`'s open transaction (also the event append's). */
export function updateRunOnSqlite(
  session: SqliteSession,
  id: string,
  patch: RunPatch,
  fence?: RunFence,
): Run | null {
  const statement = patchStatement(patch);
  const current = session.prepare<RawRunRow>(CURRENT.sqlite).get(id);
  if (!current) return null;
  // In the write's transaction (SQLite serialises them): a claim cannot come in between.
  if (!fenceHolds(current, fence)) throw new RunFencedError([id]);
  const updated = fromRaw(
    session
      .prepare<RawRunRow>(statement.sqlite)
      .get(...patchValues(patch, current, sqliteTimestamp)) as RawRunRow,
  );
  applyRunUsageOnSqlite(session, fromRaw(current), updated);
  return updated;
}
