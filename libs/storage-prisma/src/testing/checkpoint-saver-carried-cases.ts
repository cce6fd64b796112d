import { StorageError } from '@cognition/storage';
import type { RunnableConfig } from '@langchain/core/runnables';
import type { Checkpoint, CheckpointMetadata } from '@langchain/langgraph-checkpoint';
import { ERROR } from '@langchain/langgraph-checkpoint';
import type { OpenedDatabase } from '../db/db';
import { PrismaCheckpointSaver } from '../langgraph/checkpoint-saver';
import type { CheckpointSql } from '../langgraph/sql/checkpoint-sql';

interface CarriedContext {
  opened: () => OpenedDatabase;
  config: (threadId: string, checkpointNs?: string, checkpointId?: string) => RunnableConfig;
  checkpointOf: (values: Record<string, unknown>, versions: Record<string, number>) => Checkpoint;
  meta: (step: number) => CheckpointMetadata;
}

/**
 * Regular pending writes travel with the put that follows them (`held-writes.ts`): what a
 * caller sees is as if each write had been stored on its own, and the statements show that
 * they were not. The SQL layer is observed through a spy on the saver's own instance.
 */
export function carriedWritesCases(ctx: CarriedContext): void {
  const { config, checkpointOf, meta } = ctx;

  const sqlOf = (saver: PrismaCheckpointSaver): CheckpointSql =>
    (saver as unknown as { sql: CheckpointSql }).sql;

  const storedWriteCount = async (): Promise<number> => ctx.opened().db.checkpointWrite.count();

  /** Waits (no time limit beyond jest's) until the writes table holds `count` rows. */
  const untilStored = async (count: number): Promise<void> => {
    while ((await storedWriteCount()) !== count) {
      await new Promise((resolve) => setTimeout(resolve, 5));
    }
  };

  describe('writes carried by the next put', () => {
    it("stores a step's regular writes in the put of its child, not on their own", async () => {
      const saver = new PrismaCheckpointSaver(ctx.opened().db);
      const sql = sqlOf(saver);
      const inserts = jest.spyOn(sql, 'insertWrites');
      const puts = jest.spyOn(sql, 'putCheckpoint');
      const parent = await saver.put(config('t'), checkpointOf({}, {}), meta(0), {});
      await saver.putWrites(
        parent,
        [
          ['channel', 'a'],
          ['other', 'b'],
        ],
        'task',
        'path',
      );
      const child = await saver.put(
        parent,
        checkpointOf({ channel: 'a' }, { channel: 2 }),
        meta(1),
        {
          channel: 2,
        },
      );

      expect(inserts).not.toHaveBeenCalled();
      expect(puts.mock.calls[1]?.[4]?.map((row) => [row.channel, row.idx])).toEqual([
        ['channel', 0],
        ['other', 1],
      ]);
      expect((await saver.getTuple(parent))?.pendingWrites).toEqual([
        ['task', 'channel', 'a'],
        ['task', 'other', 'b'],
      ]);
      expect((await saver.getTuple(child))?.pendingWrites).toEqual([]);
    });

    it('waits for a put of the thread under way, then goes with the put chained after it', async () => {
      const saver = new PrismaCheckpointSaver(ctx.opened().db);
      const inserts = jest.spyOn(sqlOf(saver), 'insertWrites');
      const first = await saver.put(config('t'), checkpointOf({}, {}), meta(0), {});
      const second = checkpointOf({ channel: 'a' }, { channel: 2 });
      const underway = saver.put(first, second, meta(1), { channel: 2 });
      const secondConfig = config('t', '', second.id);
      await saver.putWrites(secondConfig, [['channel', 'b']], 'task');
      await underway;
      await saver.put(secondConfig, checkpointOf({ channel: 'b' }, { channel: 3 }), meta(2), {
        channel: 3,
      });

      expect(inserts).not.toHaveBeenCalled();
      expect((await saver.getTuple(secondConfig))?.pendingWrites).toEqual([
        ['task', 'channel', 'b'],
      ]);
    });

    it('stores writes no put follows on their own, and every read sees them', async () => {
      const saver = new PrismaCheckpointSaver(ctx.opened().db);
      const parent = await saver.put(config('t'), checkpointOf({}, {}), meta(0), {});
      await saver.putWrites(parent, [['channel', 'a']], 'task');
      // A read right away: the writes putWrites resolved are there.
      expect((await saver.getTuple(parent))?.pendingWrites).toEqual([['task', 'channel', 'a']]);

      await saver.putWrites(parent, [['channel', 'b']], 'second');
      // No read, no put: stored on their own all the same.
      await untilStored(2);
      const again = new PrismaCheckpointSaver(ctx.opened().db);
      expect((await again.getTuple(parent))?.pendingWrites).toEqual([
        ['second', 'channel', 'b'],
        ['task', 'channel', 'a'],
      ]);
    });

    it('keeps the first regular write of a task when two batches are held together', async () => {
      const saver = new PrismaCheckpointSaver(ctx.opened().db);
      const parent = await saver.put(config('t'), checkpointOf({}, {}), meta(0), {});
      await Promise.all([
        saver.putWrites(parent, [['channel', 'first']], 'task'),
        saver.putWrites(parent, [['channel', 'second']], 'task'),
      ]);
      await saver.put(parent, checkpointOf({}, {}), meta(1), {});
      expect((await saver.getTuple(parent))?.pendingWrites).toEqual([['task', 'channel', 'first']]);
    });

    it('stores the writes a failed put carried on their own, as before the put', async () => {
      const refused = new StorageError('CONFLICT', 'projection refused');
      const failing = new PrismaCheckpointSaver(ctx.opened().db, {
        onRootCheckpoint: {
          sqlite: () => {
            throw refused;
          },
          postgresql: () => Promise.reject(refused),
        },
      });
      const plain = new PrismaCheckpointSaver(ctx.opened().db);
      const parent = await plain.put(config('t'), checkpointOf({}, {}), meta(0), {});
      await failing.putWrites(parent, [['channel', 'a']], 'task');
      await failing.putWrites(parent, [[ERROR, 'boom']], 'other');
      await expect(failing.put(parent, checkpointOf({}, {}), meta(1), {})).rejects.toMatchObject({
        code: 'CONFLICT',
      });

      expect((await plain.getTuple(config('t')))?.checkpoint.id).toBe(
        parent.configurable?.['checkpoint_id'],
      );
      expect((await plain.getTuple(parent))?.pendingWrites).toEqual([
        ['other', ERROR, 'boom'],
        ['task', 'channel', 'a'],
      ]);
    });
  });
}
