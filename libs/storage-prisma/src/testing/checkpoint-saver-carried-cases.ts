import { StorageError } from '@cognition/storage';
import type { RunnableConfig } from '@langchain/core/runnables';
import type { Checkpoint, CheckpointMetadata } from '@langchain/langgraph-checkpoint';
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
 * caller sees is as if each write had been stored on its own (its promise settles with its
 * commit), and the statements show that they were not. The SQL layer is observed through a spy on the saver's own instance.
 */
export function carriedWritesCases(ctx: CarriedContext): void {
  const { config, checkpointOf, meta } = ctx;

  const sqlOf = (saver: PrismaCheckpointSaver): CheckpointSql =>
    (saver as unknown as { sql: CheckpointSql }).sql;

  describe('writes carried by the next put', () => {
    // As LangGraph's loop: a step's writes, then its checkpoint's put without waiting for them.
    it("stores a step's regular writes in the put of its child, and only then resolves them", async () => {
      const saver = new PrismaCheckpointSaver(ctx.opened().db);
      const sql = sqlOf(saver);
      const inserts = jest.spyOn(sql, 'insertWrites');
      const puts = jest.spyOn(sql, 'putCheckpoint');
      const parent = await saver.put(config('t'), checkpointOf({}, {}), meta(0), {});
      let resolved = false;
      const written = saver
        .putWrites(
          parent,
          [
            ['channel', 'a'],
            ['other', 'b'],
          ],
          'task',
          'path',
        )
        .then(() => {
          resolved = true;
        });
      const child = saver.put(parent, checkpointOf({ channel: 'a' }, { channel: 2 }), meta(1), {
        channel: 2,
      });
      expect(resolved).toBe(false);
      const [childConfig] = await Promise.all([child, written]);

      expect(inserts).not.toHaveBeenCalled();
      expect(puts.mock.calls[1]?.[4]?.map((row) => [row.channel, row.idx])).toEqual([
        ['channel', 0],
        ['other', 1],
      ]);
      expect((await saver.getTuple(parent))?.pendingWrites).toEqual([
        ['task', 'channel', 'a'],
        ['task', 'other', 'b'],
      ]);
      expect((await saver.getTuple(childConfig))?.pendingWrites).toEqual([]);
    });

    it('waits for a put of the thread under way, then goes with the put chained after it', async () => {
      const saver = new PrismaCheckpointSaver(ctx.opened().db);
      const inserts = jest.spyOn(sqlOf(saver), 'insertWrites');
      const first = await saver.put(config('t'), checkpointOf({}, {}), meta(0), {});
      const second = checkpointOf({ channel: 'a' }, { channel: 2 });
      const underway = saver.put(first, second, meta(1), { channel: 2 });
      const secondConfig = config('t', '', second.id);
      const written = saver.putWrites(secondConfig, [['channel', 'b']], 'task');
      await underway;
      await Promise.all([
        saver.put(secondConfig, checkpointOf({ channel: 'b' }, { channel: 3 }), meta(2), {
          channel: 3,
        }),
        written,
      ]);

      expect(inserts).not.toHaveBeenCalled();
      expect((await saver.getTuple(secondConfig))?.pendingWrites).toEqual([
        ['task', 'channel', 'b'],
      ]);
    });

    it('stores writes no put follows on their own, and a read waits for them', async () => {
      const saver = new PrismaCheckpointSaver(ctx.opened().db);
      const parent = await saver.put(config('t'), checkpointOf({}, {}), meta(0), {});
      await saver.putWrites(parent, [['channel', 'a']], 'task');
      const again = new PrismaCheckpointSaver(ctx.opened().db);
      expect((await again.getTuple(parent))?.pendingWrites).toEqual([['task', 'channel', 'a']]);

      // Not awaited: the read stores them first.
      const written = saver.putWrites(parent, [['channel', 'b']], 'second');
      expect((await saver.getTuple(parent))?.pendingWrites).toEqual([
        ['second', 'channel', 'b'],
        ['task', 'channel', 'a'],
      ]);
      await written;
    });

    it('keeps the first regular write of a task when two batches are held together', async () => {
      const saver = new PrismaCheckpointSaver(ctx.opened().db);
      const parent = await saver.put(config('t'), checkpointOf({}, {}), meta(0), {});
      await Promise.all([
        saver.putWrites(parent, [['channel', 'first']], 'task'),
        saver.putWrites(parent, [['channel', 'second']], 'task'),
        saver.put(parent, checkpointOf({}, {}), meta(1), {}),
      ]);
      expect((await saver.getTuple(parent))?.pendingWrites).toEqual([['task', 'channel', 'first']]);
    });

    it('stores the writes a failed put carried on their own, as without the put', async () => {
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
      const written = failing.putWrites(parent, [['channel', 'a']], 'task');
      await expect(failing.put(parent, checkpointOf({}, {}), meta(1), {})).rejects.toMatchObject({
        code: 'CONFLICT',
      });
      await written;

      expect((await plain.getTuple(config('t')))?.checkpoint.id).toBe(
        parent.configurable?.['checkpoint_id'],
      );
      expect((await plain.getTuple(parent))?.pendingWrites).toEqual([['task', 'channel', 'a']]);
    });

    it('rejects writes that cannot be serialized, storing the others held with them', async () => {
      const saver = new PrismaCheckpointSaver(ctx.opened().db, {
        serde: {
          dumpsTyped: (value: unknown) =>
            value === 'poison'
              ? Promise.reject(new Error('cannot serialize poison'))
              : Promise.resolve(['json', new TextEncoder().encode(JSON.stringify(value))]),
          loadsTyped: (_type: string, data: Uint8Array | string) =>
            Promise.resolve(
              JSON.parse(typeof data === 'string' ? data : new TextDecoder().decode(data)),
            ),
        },
      });
      const parent = await saver.put(config('t'), checkpointOf({}, {}), meta(0), {});
      const results = await Promise.allSettled([
        saver.putWrites(parent, [['channel', 'a']], 'task'),
        saver.putWrites(parent, [['channel', 'poison']], 'bad'),
        saver.put(parent, checkpointOf({}, {}), meta(1), {}),
      ]);
      expect(results.map((r) => r.status)).toEqual(['fulfilled', 'rejected', 'fulfilled']);
      expect(results[1]).toMatchObject({ reason: { code: 'VALIDATION_ERROR' } });
      expect((await saver.getTuple(parent))?.pendingWrites).toEqual([['task', 'channel', 'a']]);
    });
  });
}
