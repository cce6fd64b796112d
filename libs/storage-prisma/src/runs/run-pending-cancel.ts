import type { Run } from '@cognition/contracts';
import { StorageError } from '@cognition/storage';
import { applyRunUsage, lockRunRow } from '../analytics/usage-records';
import type { PrismaDb } from '../db/db';
import type { DatabaseProvider } from '../db/migrate';
import { toRun } from '../mapping';

/**
 * `RunStore.cancelPending`: the run row is locked before its status is read, and `promote`
 * changes it only `WHERE status = 'pending'`, so of a cancel and a start exactly one wins. The
 * run's end counts in its session's usage records (an aborted run), in the same transaction.
 */
export function cancelPendingRun(
  db: PrismaDb,
  provider: DatabaseProvider,
  id: string,
  finishedAt: Date,
): Promise<Run | null> {
  return db.$transaction(async (tx) => {
    await lockRunRow(tx, provider, id);
    const current = await tx.run.findUnique({ where: { id } });
    if (!current) throw new StorageError('RUN_NOT_FOUND', `Run not found: ${id}`);
    if (current.status !== 'pending') return null;
    const updated = toRun(
      await tx.run.update({
        where: { id },
        data: { status: 'aborted', finishedAt, updatedAt: new Date() },
      }),
    );
    await applyRunUsage(tx, toRun(current), updated);
    return updated;
  });
}
