import type { RawConnection } from '../db/raw-connections';
import type { RawSelect } from '../db/raw-select';
import { pgUtc, rawDateOrNull, rawSelect } from '../db/raw-select';

/**
 * The scheduler's idle passes without Prisma. Every node polls `claimDue` and
 * `listUnsettledFires` every 250 ms whether it has schedules or not; through Prisma each poll
 * compiled its queries anew (and `claimDue` opened a transaction), most of a quiet server's
 * database CPU on SQLite. A probe answers "is there anything to do?" with one prepared read on
 * the driver; only when it says yes does the full (transactional) path run. A probe is only a
 * shortcut: what it misses by a moment (a schedule becoming due right after it) the next poll
 * finds, as it would have found it had the poll come a moment earlier.
 *
 * Timestamps are compared here, not in SQL: the probe reads the earliest one and `rawDate`
 * reads it in whatever format the column holds (SQLite keeps DateTimes as text); a value it
 * cannot read counts as due, so the full path decides.
 */
const EARLIEST_DUE: RawSelect = {
  name: 'cognition_schedules_earliest_due',
  sqlite: 'SELECT min(next_fire_at) AS at FROM schedules WHERE enabled',
  postgres: `SELECT ${pgUtc('min(next_fire_at)', 'at')} FROM schedules WHERE enabled`,
};

const UNSETTLED: RawSelect = {
  name: 'cognition_schedule_fires_unsettled',
  sqlite: `SELECT (SELECT min(claimed_at) FROM schedule_fires
      WHERE run_id IS NULL AND cleanup = 'none') AS at,
    EXISTS (SELECT 1 FROM schedule_fires WHERE cleanup = 'pending') AS pending`,
  postgres: `SELECT (SELECT ${pgUtc('min(claimed_at)', 'at')} FROM schedule_fires
      WHERE run_id IS NULL AND cleanup = 'none') AS at,
    EXISTS (SELECT 1 FROM schedule_fires WHERE cleanup = 'pending') AS pending`,
};

/** Whether an enabled schedule may be due by `dueBy` (false: certainly none is). */
export async function anyDue(raw: RawConnection, dueBy: Date): Promise<boolean> {
  const [row] = await rawSelect<{ at: unknown }>(raw, EARLIEST_DUE, []);
  const earliest = rawDateOrNull(row?.at);
  return earliest !== null && !(earliest.getTime() > dueBy.getTime());
}

/**
 * Whether a fire may be unsettled: claimed before `claimedBefore` without a run, or with a
 * cleanup pending (false: certainly none is).
 */
export async function anyUnsettled(raw: RawConnection, claimedBefore: Date): Promise<boolean> {
  const [row] = await rawSelect<{ at: unknown; pending: unknown }>(raw, UNSETTLED, []);
  if (row?.pending === true || Number(row?.pending) === 1) return true;
  const oldest = rawDateOrNull(row?.at);
  return oldest !== null && !(oldest.getTime() >= claimedBefore.getTime());
}
