import { StorageError, threadNamespaceLabel } from '@cognition/storage';
import { decodeVector } from '@cognition/storage';
import {
  fakeEmbedder,
  fakeEmbedding,
  runStoreConformance,
  runStoreIndexConformance,
} from '@cognition/storage/testing';
import type { GetOperation, PutOperation, SearchOperation } from '@langchain/langgraph-checkpoint';
import type { DatabaseProvider, OpenedDatabase } from '../db/db';
import { openPostgres, openSqlite } from '../db/db';
import type { TestDatabase } from './test-db';
import { createTestDatabase } from './test-db';
import { deleteThreadItems, threadItemsWhere } from '../langgraph/namespace';
import { PrismaStore } from '../langgraph/store';

/**
 * The store specs shared by both providers: the platform's store conformance suite plus the
 * cases specific to this implementation (namespace encoding, LIKE pitfalls, TTL with a clock,
 * batch semantics, thread-item deletion). One fresh database per spec file, wiped per test.
 */
export function runPrismaStoreSpecs(provider: DatabaseProvider): void {
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

  runStoreConformance(`PrismaStore (${provider})`, async () => {
    await opened.db.storeItem.deleteMany();
    const store = new PrismaStore(opened.db);
    return { store, cleanup: () => Promise.resolve(store.stop()) };
  });

  runStoreIndexConformance(`PrismaStore (${provider})`, async (index) => {
    await opened.db.storeItem.deleteMany();
    const store = new PrismaStore(opened.db, { index });
    return { store, cleanup: () => Promise.resolve(store.stop()) };
  });

  describe(`PrismaStore (${provider})`, () => {
    let clock: Date;
    let store: PrismaStore;

    beforeEach(async () => {
      await opened.db.storeItem.deleteMany();
      clock = new Date('2030-01-01T00:00:00.000Z');
      store = new PrismaStore(opened.db, { now: () => clock });
    });

    const minutes = (n: number): void => {
      clock = new Date(clock.getTime() + n * 60_000);
    };

    it('stores the namespace as its labels joined with U+001F', async () => {
      await store.put(['a', 'b c', 'd'], 'k', { v: 1 });
      const rows = await opened.db.storeItem.findMany({ select: { namespace: true, value: true } });
      expect(rows).toEqual([{ namespace: 'a\u001fb c\u001fd', value: '{"v":1}' }]);
    });

    it('rejects labels that are empty or contain U+001F with a VALIDATION_ERROR naming them', async () => {
      const bad = store.batch([{ namespace: ['ok', 'x\u001fy'], key: 'k', value: { v: 1 } }]);
      await expect(bad).rejects.toMatchObject({
        code: 'VALIDATION_ERROR',
        details: { issues: [{ path: 'operations[0].namespace[1]' }] },
      });
      await expect(store.batch([{ namespacePrefix: ['', 'x'] }])).rejects.toBeInstanceOf(
        StorageError,
      );
      await expect(
        store.batch([{ namespace: ['ns'], key: 'nul\u0000', value: {} }]),
      ).rejects.toMatchObject({
        code: 'VALIDATION_ERROR',
        details: { issues: [{ path: 'operations[0].key' }] },
      });
      await expect(
        store.batch([
          { namespace: ['ns'], key: 'k', value: [1] as unknown as Record<string, unknown> },
        ]),
      ).rejects.toMatchObject({ code: 'VALIDATION_ERROR' });
      expect(await opened.db.storeItem.count()).toBe(0);
    });

    it('matches namespace prefixes exactly: no LIKE wildcards, no case folding', async () => {
      await store.put(['docs'], 'lower', { v: 1 });
      await store.put(['Docs'], 'upper', { v: 1 });
      await store.put(['a_b'], 'underscore', { v: 1 });
      await store.put(['axb'], 'x', { v: 1 });
      await store.put(['a%b', 'c'], 'percent', { v: 1 });
      await store.put(['docsx'], 'longer-label', { v: 1 });
      expect((await store.search(['docs'])).map((i) => i.key)).toEqual(['lower']);
      expect((await store.search(['a_b'])).map((i) => i.key)).toEqual(['underscore']);
      expect((await store.search(['a%b'])).map((i) => i.key)).toEqual(['percent']);
      expect(await store.listNamespaces({ prefix: ['a_b'] })).toEqual([['a_b']]);
      expect(await store.get(['DOCS'], 'lower')).toBeNull();
    });

    it('filters with comparison operators and pages past the first query page', async () => {
      // Rows written directly (one statement) as the store writes them: more than two pages.
      await opened.db.storeItem.createMany({
        data: Array.from({ length: 600 }, (_, i) => ({
          namespace: 'many',
          key: `k${String(i).padStart(3, '0')}`,
          value: JSON.stringify({ i, even: i % 2 === 0, tags: ['t'] }),
          createdAt: clock,
          updatedAt: clock,
        })),
      });
      const all = await store.search(['many'], { filter: { even: true }, limit: 1000 });
      expect(all).toHaveLength(300);
      const page = await store.search(['many'], {
        filter: { i: { $gte: 500, $lt: 560 } },
        offset: 50,
        limit: 20,
      });
      // Equal updatedAt (one batch), so the order falls back to namespace then key.
      expect(page.map((item) => item.key)).toEqual(
        Array.from({ length: 10 }, (_, i) => `k${550 + i}`),
      );
      expect(
        await store.search(['many'], { filter: { i: { $ne: 3 }, tags: ['t'] }, limit: 1000 }),
      ).toHaveLength(599);
      expect(await store.search(['many'], { filter: { i: { $eq: 7 } } })).toHaveLength(1);
      expect(await store.search(['many'], { filter: { i: { $gt: 597 } } })).toHaveLength(2);
      expect(await store.search(['many'], { filter: { i: { $lte: 1 } } })).toHaveLength(2);
    });

    it('answers reads from the state before the batch and applies the last put per key', async () => {
      await store.put(['b'], 'k', { v: 'before' });
      const operations: [GetOperation, PutOperation, PutOperation, SearchOperation] = [
        { namespace: ['b'], key: 'k' },
        { namespace: ['b'], key: 'k', value: { v: 'first' } },
        { namespace: ['b'], key: 'k', value: { v: 'last' } },
        { namespacePrefix: ['b'] },
      ];
      const [read, , , searched] = await store.batch(operations);
      expect(read?.value).toEqual({ v: 'before' });
      expect(searched?.map((item) => item.value)).toEqual([{ v: 'before' }]);
      expect((await store.get(['b'], 'k'))?.value).toEqual({ v: 'last' });
    });

    it('hides expired items at once, sweeps them, and restarts an item put over an expired one', async () => {
      await store.put(['t'], 'short', { v: 1 }, undefined, { ttl: 10 });
      await store.put(['t'], 'long', { v: 1 }, undefined, { ttl: 60 });
      await store.put(['t'], 'forever', { v: 1 });
      const created = (await store.get(['t'], 'short'))?.createdAt;
      minutes(10);
      expect(await store.get(['t'], 'short')).toBeNull();
      expect((await store.search(['t'])).map((i) => i.key).sort()).toEqual(['forever', 'long']);
      expect(await store.sweepExpired()).toBe(1);
      expect(await opened.db.storeItem.count()).toBe(2);
      minutes(50);
      expect(await store.listNamespaces()).toEqual([['t']]);
      await store.put(['t'], 'long', { v: 2 });
      const restarted = await store.get(['t'], 'long');
      expect(restarted?.createdAt.getTime()).toBe(clock.getTime());
      expect(restarted?.createdAt.getTime()).not.toBe(created?.getTime());
      minutes(10_000);
      expect((await store.get(['t'], 'long'))?.value).toEqual({ v: 2 });
      await expect(store.put(['t'], 'bad', { v: 1 }, undefined, { ttl: -1 })).rejects.toMatchObject(
        {
          code: 'VALIDATION_ERROR',
        },
      );
    });

    it("keeps each item's TTL: a refreshing read moves expires_at to now + it, nothing else", async () => {
      await store.put(['r'], 'ttl', { v: 1 }, undefined, { ttl: 10 });
      await store.put(['r'], 'none', { v: 1 });
      const expiry = async (key: string) =>
        (
          await opened.db.storeItem.findUnique({
            where: { namespace_key: { namespace: 'r', key } },
          })
        )?.expiresAt?.getTime() ?? null;
      const written = await expiry('ttl');
      minutes(4);
      await store.get(['r'], 'ttl');
      await store.search(['r']);
      expect(await expiry('ttl')).toBe(written);
      await store.get(['r'], 'ttl', { refreshTtl: true });
      expect(await expiry('ttl')).toBe(clock.getTime() + 10 * 60_000);
      minutes(8);
      await store.search(['r'], { refreshTtl: true });
      expect(await expiry('ttl')).toBe(clock.getTime() + 10 * 60_000);
      expect(await expiry('none')).toBeNull();
      // A refresh of an expired item does not revive it; a write without a TTL drops the TTL.
      minutes(11);
      expect(await store.get(['r'], 'ttl', { refreshTtl: true })).toBeNull();
      await store.put(['r'], 'ttl', { v: 2 });
      await store.get(['r'], 'ttl', { refreshTtl: true });
      expect(await expiry('ttl')).toBeNull();
    });

    it('sweeps expired items on writes once per interval', async () => {
      await store.put(['s'], 'a', { v: 1 }, undefined, { ttl: 1 });
      minutes(6);
      await store.put(['s'], 'b', { v: 1 });
      expect(
        (await opened.db.storeItem.findMany({ select: { key: true } })).map((row) => row.key),
      ).toEqual(['b']);
    });

    it('lists namespaces with wildcards, suffixes and depth, sorted and paged', async () => {
      for (const ns of [
        ['u', 'alice', 'prefs'],
        ['u', 'bob', 'prefs'],
        ['u', 'bob', 'notes'],
        ['v', 'x', 'prefs'],
      ]) {
        await store.put(ns, 'k', { v: 1 });
      }
      expect(await store.listNamespaces({ prefix: ['*', 'bob'] })).toEqual([
        ['u', 'bob', 'notes'],
        ['u', 'bob', 'prefs'],
      ]);
      expect(await store.listNamespaces({ suffix: ['*', 'prefs'], maxDepth: 1 })).toEqual([
        ['u'],
        ['v'],
      ]);
      expect(
        await store.listNamespaces({ prefix: ['u'], suffix: ['prefs'], limit: 1, offset: 1 }),
      ).toEqual([['u', 'bob', 'prefs']]);
      expect(await store.listNamespaces({ prefix: ['u', 'alice', 'prefs', 'deeper'] })).toEqual([]);
    });

    it('deletes exactly the items of one thread, wherever its label sits', async () => {
      const label = threadNamespaceLabel('Th_1');
      await store.put(['scope', 'user=a', label], 'k1', { v: 1 });
      await store.put([label], 'k2', { v: 1 });
      await store.put([label, 'memories'], 'k3', { v: 1 });
      await store.put([threadNamespaceLabel('th_1')], 'case', { v: 1 });
      await store.put([threadNamespaceLabel('ThX1')], 'wildcard', { v: 1 });
      await store.put([`${label}-suffix`], 'partial', { v: 1 });
      await store.put(['other'], 'unrelated', { v: 1 });
      const where = (await threadItemsWhere(opened.db, 'Th_1')) as { namespace: { in: string[] } };
      expect(where.namespace.in.sort()).toEqual(
        [['scope', 'user=a', label], [label], [label, 'memories']]
          .map((ns) => ns.join('\u001f'))
          .sort(),
      );
      const deleted = await opened.db.$transaction((tx) => deleteThreadItems(tx, 'Th_1'));
      expect(deleted).toBe(3);
      expect(
        (await opened.db.storeItem.findMany({ select: { key: true } }))
          .map((row) => row.key)
          .sort(),
      ).toEqual(['case', 'partial', 'unrelated', 'wildcard']);
      expect(await deleteThreadItems(opened.db, 'Th_1')).toBe(0);
    });

    it('keeps float32 vectors per field in store_vectors, gone with their item however it goes', async () => {
      const indexed = new PrismaStore(opened.db, {
        now: () => clock,
        index: { dims: 8, embed: fakeEmbedder(8), fields: ['a', 'b'] },
      });
      await indexed.put(['n'], 'k', { a: 'one two', b: 'three' });
      const rows = await opened.db.storeVector.findMany({ orderBy: { field: 'asc' } });
      expect(rows.map((row) => [row.field, [...decodeVector(row.vector)]])).toEqual([
        ['a', fakeEmbedding('one two', 8)],
        ['b', fakeEmbedding('three', 8)],
      ]);
      await indexed.delete(['n'], 'k');
      expect(await opened.db.storeVector.count()).toBe(0);
      await indexed.batch([
        { namespace: ['n'], key: 'ttl', value: { a: 'x' }, ttl: 1 } as PutOperation,
      ]);
      minutes(2);
      expect(await indexed.search(['n'], { query: 'x' })).toEqual([]);
      await indexed.sweepExpired();
      expect(await opened.db.storeVector.count()).toBe(0);
      const label = threadNamespaceLabel('t1');
      await indexed.put([label], 'k', { a: 'y' });
      await deleteThreadItems(opened.db, 't1');
      expect(await opened.db.storeVector.count()).toBe(0);
    });

    it('runs the periodic sweep between start() and stop()', () => {
      jest.useFakeTimers({ doNotFake: ['nextTick', 'setImmediate', 'queueMicrotask'] });
      try {
        const swept = jest.spyOn(store, 'sweepExpired').mockResolvedValue(0);
        store.start();
        store.start();
        jest.advanceTimersByTime(5 * 60_000);
        expect(swept).toHaveBeenCalledTimes(1);
        store.stop();
        jest.advanceTimersByTime(60 * 60_000);
        expect(swept).toHaveBeenCalledTimes(1);
      } finally {
        jest.useRealTimers();
      }
    });
  });
}
