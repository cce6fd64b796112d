import type { BaseStore } from '@langchain/langgraph-checkpoint';
import type { TtlCapableStore } from '../store/store-ttl';
import { putWithTtl } from '../store/store-ttl';
import type { StoreConformanceHarness, StoreHarnessFactory } from './harness';
import { sleep } from './helpers';

/**
 * Registers jest tests proving that a LangGraph `BaseStore` (ours: with TTL support through
 * `put(..., { ttl })`) behaves as the platform expects: put/get/overwrite/delete, search by
 * namespace prefix with filters and limit/offset, listNamespaces with prefix/suffix/maxDepth and
 * paging, TTL expiry and its refresh on read (`{ refreshTtl: true }`), and exact value round-trips. Each test gets a fresh store from `factory`.
 */
export function runStoreConformance(name: string, factory: StoreHarnessFactory): void {
  describe(`${name}: store conformance`, () => {
    let harness: StoreConformanceHarness;
    let store: BaseStore;

    beforeEach(async () => {
      harness = await factory();
      store = harness.store;
    });

    afterEach(async () => {
      await harness.cleanup();
    });

    it('puts and gets an item with its namespace, key, value and timestamps', async () => {
      const value = { text: 'likes tea 🍵', nested: { list: [1, 'two', null], flag: true } };
      await store.put(['memories', 'alice'], 'pref', value);
      const item = await store.get(['memories', 'alice'], 'pref');
      expect(item).not.toBeNull();
      expect(item?.namespace).toEqual(['memories', 'alice']);
      expect(item?.key).toBe('pref');
      expect(item?.value).toEqual(value);
      expect(item?.createdAt).toBeInstanceOf(Date);
      expect(item?.updatedAt).toBeInstanceOf(Date);
      expect(await store.get(['memories', 'alice'], 'missing')).toBeNull();
      expect(await store.get(['memories', 'bob'], 'pref')).toBeNull();
    });

    it('overwrites an item in place, keeping createdAt', async () => {
      await store.put(['ns'], 'k', { v: 1 });
      const first = await store.get(['ns'], 'k');
      await sleep(5);
      await store.put(['ns'], 'k', { v: 2 });
      const second = await store.get(['ns'], 'k');
      expect(second?.value).toEqual({ v: 2 });
      expect(second?.createdAt.getTime()).toBe(first?.createdAt.getTime());
      expect(second?.updatedAt.getTime()).toBeGreaterThanOrEqual(first?.updatedAt.getTime() ?? 0);
      expect(await store.search(['ns'])).toHaveLength(1);
    });

    it('deletes an item, and deleting a missing item is a no-op', async () => {
      await store.put(['ns'], 'a', { v: 1 });
      await store.put(['ns'], 'b', { v: 2 });
      await store.delete(['ns'], 'a');
      await store.delete(['ns'], 'never-existed');
      expect(await store.get(['ns'], 'a')).toBeNull();
      expect((await store.get(['ns'], 'b'))?.value).toEqual({ v: 2 });
    });

    it('searches by namespace prefix', async () => {
      await store.put(['docs', 'a'], '1', { n: 1 });
      await store.put(['docs', 'b'], '2', { n: 2 });
      await store.put(['docs'], '3', { n: 3 });
      await store.put(['other'], '4', { n: 4 });
      const docs = await store.search(['docs']);
      expect(docs.map((item) => item.key).sort()).toEqual(['1', '2', '3']);
      expect((await store.search(['docs', 'a'])).map((item) => item.key)).toEqual(['1']);
      expect(await store.search(['doc'])).toEqual([]);
      expect((await store.search([], { limit: 100 })).map((item) => item.key).sort()).toEqual([
        '1',
        '2',
        '3',
        '4',
      ]);
    });

    it('filters search results on value fields (all must match)', async () => {
      await store.put(['docs'], 'r1', { type: 'report', year: 2024 });
      await store.put(['docs'], 'r2', { type: 'report', year: 2025 });
      await store.put(['docs'], 'n1', { type: 'note', year: 2025 });
      const reports = await store.search(['docs'], { filter: { type: 'report' } });
      expect(reports.map((item) => item.key).sort()).toEqual(['r1', 'r2']);
      const both = await store.search(['docs'], { filter: { type: 'report', year: 2025 } });
      expect(both.map((item) => item.key)).toEqual(['r2']);
      expect(await store.search(['docs'], { filter: { type: 'memo' } })).toEqual([]);
    });

    it('pages search results with limit and offset', async () => {
      for (let i = 0; i < 5; i += 1) await store.put(['paged'], `k${i}`, { i });
      const first = await store.search(['paged'], { limit: 2, offset: 0 });
      const second = await store.search(['paged'], { limit: 2, offset: 2 });
      const third = await store.search(['paged'], { limit: 2, offset: 4 });
      expect(first).toHaveLength(2);
      expect(second).toHaveLength(2);
      expect(third).toHaveLength(1);
      const keys = [...first, ...second, ...third].map((item) => item.key);
      expect(new Set(keys).size).toBe(5);
      expect(await store.search(['paged'], { limit: 2, offset: 10 })).toEqual([]);
    });

    it('lists namespaces with prefix, suffix, maxDepth, limit and offset', async () => {
      await store.put(['users', 'alice', 'prefs'], 'k', { v: 1 });
      await store.put(['users', 'bob', 'prefs'], 'k', { v: 1 });
      await store.put(['users', 'bob', 'notes'], 'k', { v: 1 });
      await store.put(['teams', 'core'], 'k', { v: 1 });
      const all = await store.listNamespaces();
      expect(all.map((ns) => ns.join('/')).sort()).toEqual([
        'teams/core',
        'users/alice/prefs',
        'users/bob/notes',
        'users/bob/prefs',
      ]);
      const users = await store.listNamespaces({ prefix: ['users'] });
      expect(users).toHaveLength(3);
      const prefs = await store.listNamespaces({ suffix: ['prefs'] });
      expect(prefs.map((ns) => ns.join('/')).sort()).toEqual([
        'users/alice/prefs',
        'users/bob/prefs',
      ]);
      const shallow = await store.listNamespaces({ prefix: ['users'], maxDepth: 2 });
      expect(shallow.map((ns) => ns.join('/')).sort()).toEqual(['users/alice', 'users/bob']);
      const pageOne = await store.listNamespaces({ limit: 2, offset: 0 });
      const pageTwo = await store.listNamespaces({ limit: 2, offset: 2 });
      expect(pageOne).toHaveLength(2);
      expect(pageTwo).toHaveLength(2);
      expect(new Set([...pageOne, ...pageTwo].map((ns) => ns.join('/'))).size).toBe(4);
    });

    it('expires an item written with a TTL and keeps items without one', async () => {
      await putWithTtl(store, ['ttl'], 'short', { v: 'gone soon' }, 0.005);
      await store.put(['ttl'], 'forever', { v: 'stays' });
      expect((await store.get(['ttl'], 'short'))?.value).toEqual({ v: 'gone soon' });
      await sleep(650);
      expect(await store.get(['ttl'], 'short')).toBeNull();
      expect((await store.search(['ttl'])).map((item) => item.key)).toEqual(['forever']);
      await store.delete(['ttl'], 'forever');
      expect(await store.listNamespaces({ prefix: ['ttl'] })).toEqual([]);
    });

    it('extends a TTL on a get or search with refreshTtl, and only then', async () => {
      const ttlStore: TtlCapableStore = store;
      // 0.02 minutes: 1.2 s. Both TTL items start alike; one is read with refresh every 100 ms,
      // the other without, until the latter expires: the refreshed one is then still there.
      await putWithTtl(store, ['refresh'], 'by-get', { kind: 'g' }, 0.02);
      await putWithTtl(store, ['refresh'], 'by-search', { kind: 's' }, 0.02);
      await putWithTtl(store, ['refresh'], 'plain', { kind: 'p' }, 0.02);
      await store.put(['refresh'], 'no-ttl', { kind: 's' });
      const written = await store.get(['refresh'], 'by-get');
      let plainExpired = false;
      for (let attempt = 0; attempt < 100 && !plainExpired; attempt += 1) {
        await sleep(100);
        expect(await ttlStore.get(['refresh'], 'by-get', { refreshTtl: true })).not.toBeNull();
        const found = await ttlStore.search(['refresh'], {
          filter: { kind: 's' },
          refreshTtl: true,
        });
        expect(found.map((item) => item.key).sort()).toEqual(['by-search', 'no-ttl']);
        plainExpired = (await ttlStore.get(['refresh'], 'plain', { refreshTtl: false })) === null;
      }
      expect(plainExpired).toBe(true);
      const refreshed = await store.get(['refresh'], 'by-get');
      // A refresh moves the expiry only: the item is the one written.
      expect(refreshed?.value).toEqual({ kind: 'g' });
      expect(refreshed?.updatedAt).toEqual(written?.updatedAt);
      expect(refreshed?.createdAt).toEqual(written?.createdAt);
      expect((await store.search(['refresh'])).map((item) => item.key).sort()).toEqual([
        'by-get',
        'by-search',
        'no-ttl',
      ]);
      // The item without a TTL gained none from being read with refresh; the others, read no
      // more, expire on their own.
      let refreshedExpired = false;
      for (let attempt = 0; attempt < 100 && !refreshedExpired; attempt += 1) {
        await sleep(100);
        refreshedExpired = (await store.search(['refresh'])).length === 1;
      }
      expect((await store.search(['refresh'])).map((item) => item.key)).toEqual(['no-ttl']);
    });

    it('round-trips non-ASCII keys and values exactly', async () => {
      const text = 'emoji 👩‍👩‍👧‍👦 CJK 漢字かな RTL مرحبا שלום combining e\u0301 n\u0303';
      await store.put(['unicode', 'ns'], 'clé-漢字', { text });
      const item = await store.get(['unicode', 'ns'], 'clé-漢字');
      expect(item?.value).toEqual({ text });
    });

    it('rejects invalid namespaces', async () => {
      await expect(store.put([], 'k', { v: 1 })).rejects.toThrow();
      await expect(store.put(['bad.label'], 'k', { v: 1 })).rejects.toThrow();
      await expect(store.put(['langgraph'], 'k', { v: 1 })).rejects.toThrow();
      expect(await store.search([])).toEqual([]);
    });

    it('handles concurrent writers without losing items', async () => {
      await Promise.all(
        Array.from({ length: 25 }, (_, i) => store.put(['concurrent'], `k${i}`, { i })),
      );
      expect(await store.search(['concurrent'], { limit: 100 })).toHaveLength(25);
    });
  });
}
