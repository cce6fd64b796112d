import type {
  CheckpointFootprint,
  CheckpointRetentionStore,
  StoredCheckpointRef,
} from '@cognition/storage';
import { ROOT_CHECKPOINT_NS } from '@cognition/storage';
import type { PrismaDb } from '../db/db';
import { guard } from '../db/errors';
import { decodeCheckpointBlob, inlineSegments } from './checkpoint-codec';
import type { DatabaseProvider } from '../db/migrate';

/** Ids per DELETE statement: bounded, so one prune step never holds locks for long. */
const DELETE_CHUNK = 500;

/** Checkpoint retention on the `checkpoints` / `checkpoint_writes` tables. */
export class PrismaCheckpointRetention implements CheckpointRetentionStore {
  constructor(
    private readonly db: PrismaDb,
    private readonly provider: DatabaseProvider,
  ) {}

  list(threadId: string): Promise<StoredCheckpointRef[]> {
    return guard('list checkpoints', async () => {
      const rows = await this.db.checkpoint.findMany({
        where: { threadId, checkpointNs: ROOT_CHECKPOINT_NS },
        select: { checkpointId: true, createdAt: true },
        orderBy: { checkpointId: 'desc' },
      });
      return rows.map((row) => ({ checkpointId: row.checkpointId, createdAt: row.createdAt }));
    });
  }

  /**
   * One transaction per chunk of ids: the head is re-read inside it (a checkpoint written
   * meanwhile becomes the head and the old head is then prunable, never the new one), writes go
   * first, then the checkpoints. Rows another process deleted already just do not match.
   * Checkpoints that stay but refer to segments the deleted ones held (the messages channel is
   * stored as segments shared with ancestors, see `langgraph/list-channels.ts`) get a copy of
   * those segments first. They are read after the delete: a put that referred to a deleted
   * checkpoint held a lock on it (PostgreSQL) or the write lock (SQLite), so it has committed
   * by then and is among them.
   */
  delete(threadId: string, checkpointIds: readonly string[]): Promise<number> {
    const ids = [...new Set(checkpointIds)];
    return guard('delete checkpoints', async () => {
      let deleted = 0;
      for (let start = 0; start < ids.length; start += DELETE_CHUNK) {
        const chunk = ids.slice(start, start + DELETE_CHUNK);
        deleted += await this.db.$transaction(async (tx) => {
          const head = await tx.checkpoint.findFirst({
            where: { threadId, checkpointNs: ROOT_CHECKPOINT_NS },
            orderBy: { checkpointId: 'desc' },
            select: { checkpointId: true },
          });
          const prunable = chunk.filter((id) => id !== head?.checkpointId);
          if (prunable.length === 0) return 0;
          const where = {
            threadId,
            checkpointNs: ROOT_CHECKPOINT_NS,
            checkpointId: { in: prunable },
          };
          const doomed = await tx.checkpoint.findMany({
            where,
            select: { checkpointId: true, checkpoint: true },
          });
          await tx.checkpointWrite.deleteMany({ where });
          const count = (await tx.checkpoint.deleteMany({ where })).count;
          const holders = new Map(
            doomed.map((row) => [row.checkpointId, decodeCheckpointBlob(row.checkpoint).segments]),
          );
          // Segments are only ever referred to by descendants, whose ids are greater.
          const oldest = prunable.reduce((a, b) => (a < b ? a : b));
          const survivors = await tx.checkpoint.findMany({
            where: { threadId, checkpointNs: ROOT_CHECKPOINT_NS, checkpointId: { gt: oldest } },
            select: { checkpointId: true, checkpoint: true },
            // One order for every pruner, so two never lock the same rows in opposite orders.
            orderBy: { checkpointId: 'asc' },
          });
          for (const row of survivors) {
            const inlined = inlineSegments(row.checkpoint, row.checkpointId, holders);
            if (!inlined) continue;
            await tx.checkpoint.update({
              where: {
                threadId_checkpointNs_checkpointId: {
                  threadId,
                  checkpointNs: ROOT_CHECKPOINT_NS,
                  checkpointId: row.checkpointId,
                },
              },
              data: { checkpoint: inlined },
            });
          }
          return count;
        });
      }
      return deleted;
    });
  }

  footprint(threadId: string): Promise<CheckpointFootprint> {
    return guard('measure checkpoints', async () => {
      const length = this.provider === 'sqlite' ? 'length' : 'octet_length';
      const [checkpoints] = await this.db.$queryRawUnsafe<
        { n: bigint | number; b: bigint | number | null }[]
      >(
        `SELECT count(*) AS n, sum(${length}(checkpoint) + ${length}(metadata)) AS b
           FROM checkpoints WHERE thread_id = ${this.provider === 'sqlite' ? '?' : '$1'}`,
        threadId,
      );
      const [writes] = await this.db.$queryRawUnsafe<
        { n: bigint | number; b: bigint | number | null }[]
      >(
        `SELECT count(*) AS n, sum(${length}(value)) AS b
           FROM checkpoint_writes WHERE thread_id = ${this.provider === 'sqlite' ? '?' : '$1'}`,
        threadId,
      );
      return {
        checkpoints: Number(checkpoints?.n ?? 0),
        writes: Number(writes?.n ?? 0),
        bytes: Number(checkpoints?.b ?? 0) + Number(writes?.b ?? 0),
      };
    });
  }
}
