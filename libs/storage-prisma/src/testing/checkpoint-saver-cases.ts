import { StorageError } from '@cognition/storage';
import type { RunnableConfig } from '@langchain/core/runnables';
import type {
  Checkpoint,
  CheckpointMetadata,
  CheckpointTuple,
} from '@langchain/langgraph-checkpoint';
import { ERROR, INTERRUPT, emptyCheckpoint, uuid6 } from '@langchain/langgraph-checkpoint';
import type { CheckpointSaverTestInitializer } from '@langchain/langgraph-checkpoint-validation';
import type { DatabaseProvider, OpenedDatabase } from '../db/db';
import { openPostgres, openSqlite } from '../db/db';
import type { TestDatabase } from './test-db';
import { createTestDatabase } from './test-db';
import type { RootCheckpoint } from '../langgraph/checkpoint-saver';
import { PrismaCheckpointSaver } from '../langgraph/checkpoint-saver';
import { channelValueCases } from './checkpoint-saver-values';
import { carriedWritesCases } from './checkpoint-saver-carried-cases';

// The validation package is consumed through CommonJS (its vitest CLI cannot load initializers
// here); these functions register describe/it blocks on jest's globals.
// eslint-disable-next-line @typescript-eslint/no-require-imports
const validation = require('@langchain/langgraph-checkpoint-validation') as {
  validate(initializer: CheckpointSaverTestInitializer<PrismaCheckpointSaver>): void;
  deltaChannelHistoryTests(
    initializer: CheckpointSaverTestInitializer<PrismaCheckpointSaver>,
  ): void;
};

/**
 * The checkpointer specs shared by both providers: LangGraph's checkpoint validation suite in full
 * (plus its opt-in delta-channel-history suite), then the behaviour specific to this saver. One
 * fresh database per spec file; every validation group starts from empty tables, because `list`
 * without a thread id sees every row.
 */
export function runPrismaSaverSpecs(provider: DatabaseProvider): void {
  let database: TestDatabase;
  let opened: OpenedDatabase;

  beforeAll(async () => {
    database = await createTestDatabase(provider);
    opened =
      database.provider === 'sqlite'
        ? await openSqlite(database.path)
        : await openPostgres(database.url);
  });

  afterAll(async () => {
    await opened.close();
    await database.cleanup();
  });

  const wipe = async (): Promise<void> => {
    await opened.db.checkpointWrite.deleteMany();
    await opened.db.checkpoint.deleteMany();
    await opened.db.storeItem.deleteMany();
  };

  const initializer: CheckpointSaverTestInitializer<PrismaCheckpointSaver> = {
    checkpointerName: `PrismaCheckpointSaver (${provider})`,
    createCheckpointer: () => new PrismaCheckpointSaver(opened.db),
    destroyCheckpointer: wipe,
  };
  validation.validate(initializer);
  describe('opt-in validation', () => validation.deltaChannelHistoryTests(initializer));

  describe(`PrismaCheckpointSaver (${provider})`, () => {
    let saver: PrismaCheckpointSaver;
    beforeEach(async () => {
      await wipe();
      saver = new PrismaCheckpointSaver(opened.db);
    });

    const config = (
      thread_id: string,
      checkpoint_ns = '',
      checkpoint_id?: string,
    ): RunnableConfig => ({
      configurable: { thread_id, checkpoint_ns, ...(checkpoint_id ? { checkpoint_id } : {}) },
    });
    const checkpointOf = (
      values: Record<string, unknown>,
      versions: Record<string, number>,
    ): Checkpoint => ({
      ...emptyCheckpoint(),
      id: uuid6(-1),
      channel_values: values,
      channel_versions: versions,
    });
    const meta = (step: number) => ({ source: 'loop' as const, step, parents: {} });

    describe('root checkpoint hook', () => {
      const ROW = 'SELECT 1 AS found FROM checkpoints WHERE thread_id = ? AND checkpoint_id = ?';
      const MARK = "INSERT INTO store_items (namespace, key, value) VALUES ('hook', ?, '{}')";
      const pgText = (sql: string): string => {
        let n = 0;
        return sql.replace(/\?/g, () => `$${(n += 1)}`);
      };

      it('runs inside the put transaction for root checkpoints only, with the full checkpoint', async () => {
        const calls: {
          threadId: string;
          checkpointId: string;
          values: unknown;
          rowVisible: boolean;
        }[] = [];
        const record = (put: RootCheckpoint, rowVisible: boolean) =>
          calls.push({
            threadId: put.threadId,
            checkpointId: put.checkpointId,
            values: put.checkpoint.channel_values,
            rowVisible,
          });
        const hooked = new PrismaCheckpointSaver(opened.db, {
          onRootCheckpoint: {
            sqlite: (session, put) => {
              record(put, session.prepare(ROW).get(put.threadId, put.checkpointId) !== undefined);
              session.prepare(MARK).run(put.checkpointId);
            },
            postgresql: async (client, put) => {
              const found = await client.query(pgText(ROW), [put.threadId, put.checkpointId]);
              record(put, found.rows.length === 1);
              await client.query(pgText(MARK), [put.checkpointId]);
            },
          },
        });
        const first = checkpointOf({ messages: ['a'], other: 1 }, { messages: 1, other: 1 });
        const firstConfig = await hooked.put(config('t'), first, meta(0), {
          messages: 1,
          other: 1,
        });
        const second = checkpointOf({ messages: ['a', 'b'], other: 1 }, { messages: 2, other: 1 });
        await hooked.put(firstConfig, second, meta(1), { messages: 2 });
        await hooked.put(config('t', 'child'), checkpointOf({}, {}), meta(0), {});
        expect(calls).toEqual([
          {
            threadId: 't',
            checkpointId: first.id,
            values: { messages: ['a'], other: 1 },
            rowVisible: true,
          },
          {
            threadId: 't',
            checkpointId: second.id,
            values: { messages: ['a', 'b'], other: 1 },
            rowVisible: true,
          },
        ]);
        expect(await opened.db.storeItem.count({ where: { namespace: 'hook' } })).toBe(2);
      });

      it('stores nothing when the hook throws, and surfaces its error', async () => {
        const refused = new StorageError('CONFLICT', 'projection refused');
        const failing = new PrismaCheckpointSaver(opened.db, {
          onRootCheckpoint: {
            sqlite: (session) => {
              session.prepare(MARK).run('k');
              throw refused;
            },
            postgresql: async (client) => {
              await client.query(pgText(MARK), ['k']);
              throw refused;
            },
          },
        });
        const checkpoint = checkpointOf({ messages: ['a'] }, { messages: 1 });
        await expect(
          failing.put(config('t'), checkpoint, meta(0), { messages: 1 }),
        ).rejects.toMatchObject({
          code: 'CONFLICT',
          message: 'projection refused',
        });
        expect(await saver.getTuple(config('t'))).toBeUndefined();
        expect(await opened.db.storeItem.count()).toBe(0);
      });
    });

    describe('bad input', () => {
      it('rejects missing or unstorable ids with a VALIDATION_ERROR naming the field', async () => {
        const checkpoint = checkpointOf({}, {});
        await expect(
          saver.put({ configurable: {} }, checkpoint, meta(0), {}),
        ).rejects.toMatchObject({
          code: 'VALIDATION_ERROR',
          details: { issues: [{ path: 'configurable.thread_id' }] },
        });
        await expect(saver.put(config('a\u0000b'), checkpoint, meta(0), {})).rejects.toMatchObject({
          code: 'VALIDATION_ERROR',
          details: { issues: [{ path: 'configurable.thread_id' }] },
        });
        await expect(saver.putWrites(config('t'), [['c', 1]], 'task')).rejects.toMatchObject({
          code: 'VALIDATION_ERROR',
          details: { issues: [{ path: 'configurable.checkpoint_id' }] },
        });
        const refusing = new PrismaCheckpointSaver(opened.db, {
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
        await expect(
          refusing.put(config('t'), checkpointOf({ n: 'poison' }, { n: 1 }), meta(0), { n: 1 }),
        ).rejects.toMatchObject({
          code: 'VALIDATION_ERROR',
          details: { issues: [{ path: 'checkpoint.channel_values.n' }] },
        });
        const listing = saver.list(config('t'), { limit: -1 });
        await expect(listing.next()).rejects.toMatchObject({ code: 'VALIDATION_ERROR' });
        expect(await opened.db.checkpoint.count()).toBe(0);
      });
    });

    it('refuses a Prisma client this library did not make, or the wrong provider', () => {
      // It queries the driver under the client, which only clients from open*/create*Handle
      // expose to it.
      const foreign = {} as unknown as typeof opened.db;
      const other = provider === 'sqlite' ? 'postgresql' : 'sqlite';
      const attempts = [
        () => new PrismaCheckpointSaver(foreign, { provider }),
        () => new PrismaCheckpointSaver(opened.db, { provider: other }),
      ];
      const errors = attempts.map((attempt) => {
        try {
          attempt();
        } catch (error) {
          return error;
        }
        return undefined;
      });
      expect(errors.map((error) => (error as StorageError | undefined)?.code)).toEqual([
        'STORAGE_ERROR',
        'STORAGE_ERROR',
      ]);
      expect(attempts[0]).toThrow(/needs a Prisma client made by openSqlite\/openPostgres/);
      expect(attempts[1]).toThrow(`the Prisma client is ${provider}, not ${other}`);
    });

    it('reports a row it cannot decode as a STORAGE_ERROR', async () => {
      await opened.db.checkpoint.create({
        data: {
          threadId: 'foreign',
          checkpointId: 'c1',
          checkpoint: new Uint8Array([1, 2, 3]),
          metadata: new Uint8Array(),
        },
      });
      await expect(saver.getTuple(config('foreign'))).rejects.toMatchObject({
        code: 'STORAGE_ERROR',
      });
    });

    channelValueCases({ saver: () => saver, opened: () => opened, config, checkpointOf, meta });
    carriedWritesCases({ opened: () => opened, config, checkpointOf, meta });

    describe('writes', () => {
      it('keeps the first regular write of a task and replaces special writes', async () => {
        const stored = await saver.put(config('t'), checkpointOf({}, {}), meta(0), {});
        await saver.putWrites(stored, [['channel', 'first']], 'task');
        await saver.putWrites(stored, [['channel', 'second']], 'task');
        await saver.putWrites(stored, [[ERROR, 'boom-1']], 'task');
        await saver.putWrites(stored, [[ERROR, 'boom-2']], 'task');
        await saver.putWrites(
          stored,
          [
            [INTERRUPT, 'ask'],
            ['channel', 'mixed'],
          ],
          'other',
        );
        await saver.putWrites(
          stored,
          [
            [INTERRUPT, 'ask-again'],
            ['channel', 'mixed-again'],
          ],
          'other',
        );
        const tuple = await saver.getTuple(stored);
        expect(tuple?.pendingWrites).toEqual([
          ['other', INTERRUPT, 'ask'],
          ['other', 'channel', 'mixed'],
          ['task', ERROR, 'boom-2'],
          ['task', 'channel', 'first'],
        ]);
      });

      it('treats channels named like Object.prototype members as regular writes', async () => {
        const stored = await saver.put(config('t'), checkpointOf({}, {}), meta(0), {});
        await saver.putWrites(
          stored,
          [
            ['constructor', 1],
            ['toString', 2],
          ],
          'task',
        );
        await saver.putWrites(stored, [['constructor', 3]], 'task');
        expect((await saver.getTuple(stored))?.pendingWrites).toEqual([
          ['task', 'constructor', 1],
          ['task', 'toString', 2],
        ]);
      });

      it('returns pending writes in (task_path, task_id, idx) order', async () => {
        const stored = await saver.put(config('t'), checkpointOf({}, {}), meta(0), {});
        await saver.putWrites(
          stored,
          [
            ['c', 'b1'],
            ['c', 'b2'],
          ],
          'task-a',
          '~b',
        );
        await saver.putWrites(stored, [['c', 'a1']], 'task-z', '~a');
        await saver.putWrites(stored, [['c', 'input']], 'task-m');
        const tuple = await saver.getTuple(stored);
        expect(tuple?.pendingWrites?.map(([, , value]) => value)).toEqual([
          'input',
          'a1',
          'b1',
          'b2',
        ]);
      });
    });

    describe('list', () => {
      const putChain = async (threadId: string, count: number): Promise<string[]> => {
        let current = config(threadId);
        const ids: string[] = [];
        for (let step = 0; step < count; step += 1) {
          const checkpoint = checkpointOf({ step }, { step: step + 1 });
          current = await saver.put(
            current,
            checkpoint,
            { ...meta(step), parity: step % 2 } as CheckpointMetadata,
            { step: step + 1 },
          );
          await saver.putWrites(current, [['w', step]], `task-${step}`);
          ids.push(checkpoint.id);
        }
        return ids.reverse();
      };
      const collect = async (
        iterator: AsyncGenerator<CheckpointTuple>,
      ): Promise<CheckpointTuple[]> => {
        const out: CheckpointTuple[] = [];
        for await (const tuple of iterator) out.push(tuple);
        return out;
      };

      it('pages through long histories newest first, with writes, filters and limits', async () => {
        const ids = await putChain('long', 230);
        await putChain('other', 3);
        const all = await collect(saver.list(config('long')));
        expect(all.map((tuple) => tuple.checkpoint.id)).toEqual(ids);
        expect(all.every((tuple, i) => tuple.pendingWrites?.[0]?.[2] === 229 - i)).toBe(true);
        const odd = await collect(
          saver.list(config('long'), { filter: { parity: 1 }, limit: 110 }),
        );
        expect(odd.map((tuple) => tuple.checkpoint.id)).toEqual(
          ids.filter((_, i) => i % 2 === 0).slice(0, 110),
        );
        const before = await collect(
          saver.list(config('long'), { before: config('long', '', ids[200]), limit: 5 }),
        );
        expect(before.map((tuple) => tuple.checkpoint.id)).toEqual(ids.slice(201, 206));
        expect(await collect(saver.list({ configurable: {} }))).toHaveLength(233);
        expect(await collect(saver.list(config('long'), { limit: 0 }))).toEqual([]);
      });
    });
  });
}
