import { langGraphServerForSpec } from './testing/langgraph-sdk';
import { postgresServerDatabase, sqliteServerDatabase } from './testing/postgres';
import type { ServerDatabase } from './testing/postgres';

/**
 * The LangGraph store API (issue 28) driven by the official SDK's `client.store` against the
 * built server: items put, read, searched (prefix, filter, paging), listed by namespace, expired
 * by TTL (kept alive by reads with `refresh_ttl`) and deleted, each tenant confined to its own, and the same store inside a graph's nodes
 * (`config.store`); bad input named.
 */
const ALICE = 'e2e-lg-store-alice-0123456789';
const BOB = 'e2e-lg-store-bob-0123456789';

describe.each<[string, () => Promise<ServerDatabase>]>([
  ['SQLite', () => sqliteServerDatabase('cognition-e2e-lg-store-')],
  ['PostgreSQL', () => postgresServerDatabase()],
])('the LangGraph store API on %s (issue 28)', (_name, createDatabase) => {
  const lg = langGraphServerForSpec(
    { alice: ALICE, bob: BOB },
    createDatabase,
    'cognition-e2e-lg-store-ws-',
  );

  it('puts, gets, overwrites and deletes an item', async () => {
    const store = lg.alice.store;
    expect(await store.getItem(['prefs', 'ui'], 'theme')).toBeNull();
    await store.putItem(['prefs', 'ui'], 'theme', { mode: 'dark', size: 12 });
    const item = await store.getItem(['prefs', 'ui'], 'theme');
    expect(item).toMatchObject({
      namespace: ['prefs', 'ui'],
      key: 'theme',
      value: { mode: 'dark', size: 12 },
    });
    expect(Date.parse(String(item?.createdAt))).not.toBeNaN();
    await store.putItem(['prefs', 'ui'], 'theme', { mode: 'light' });
    const updated = await store.getItem(['prefs', 'ui'], 'theme');
    expect(updated?.value).toEqual({ mode: 'light' });
    expect(updated?.createdAt).toBe(item?.createdAt);
    await store.deleteItem(['prefs', 'ui'], 'theme');
    expect(await store.getItem(['prefs', 'ui'], 'theme')).toBeNull();
  });

  it('searches under a namespace prefix with a filter and paging', async () => {
    const store = lg.alice.store;
    for (let i = 0; i < 5; i += 1) {
      await store.putItem(['notes', i % 2 === 0 ? 'even' : 'odd'], `n${i}`, { i, kind: 'note' });
    }
    await store.putItem(['other'], 'x', { kind: 'note' });
    const all = await store.searchItems(['notes'], { limit: 10 });
    expect(all.items.map((item) => item.key).sort()).toEqual(['n0', 'n1', 'n2', 'n3', 'n4']);
    const odd = await store.searchItems(['notes'], { filter: { i: 3 } });
    expect(odd.items.map((item) => [item.namespace, item.key])).toEqual([[['notes', 'odd'], 'n3']]);
    const first = await store.searchItems(['notes'], { limit: 2 });
    const rest = await store.searchItems(['notes'], { limit: 10, offset: 2 });
    expect(first.items).toHaveLength(2);
    expect(rest.items).toHaveLength(3);
    expect(new Set([...first.items, ...rest.items].map((item) => item.key)).size).toBe(5);
  });

  it('lists namespaces by prefix, suffix and depth', async () => {
    const store = lg.alice.store;
    await store.putItem(['docs', 'a', 'v1'], 'k', { x: 1 });
    await store.putItem(['docs', 'b', 'v1'], 'k', { x: 1 });
    await store.putItem(['docs', 'b', 'v2'], 'k', { x: 1 });
    const under = await store.listNamespaces({ prefix: ['docs'] });
    expect(under.namespaces).toEqual(
      expect.arrayContaining([
        ['docs', 'a', 'v1'],
        ['docs', 'b', 'v1'],
        ['docs', 'b', 'v2'],
      ]),
    );
    expect(under.namespaces).toHaveLength(3);
    const v1 = await store.listNamespaces({ prefix: ['docs'], suffix: ['v1'] });
    expect(v1.namespaces).toHaveLength(2);
    const shallow = await store.listNamespaces({ prefix: ['docs'], maxDepth: 2 });
    expect(shallow.namespaces).toEqual(
      expect.arrayContaining([
        ['docs', 'a'],
        ['docs', 'b'],
      ]),
    );
    expect(shallow.namespaces).toHaveLength(2);
  });

  it('an item written with a TTL is gone once it expires', async () => {
    const store = lg.alice.store;
    // 0.02 minutes: 1.2 s.
    await store.putItem(['session', 'scratch'], 'short', { v: 1 }, { ttl: 0.02 });
    await store.putItem(['session', 'scratch'], 'kept', { v: 2 }, { ttl: null });
    expect((await store.getItem(['session', 'scratch'], 'short'))?.value).toEqual({ v: 1 });
    let expired = false;
    for (let attempt = 0; attempt < 100 && !expired; attempt += 1) {
      await new Promise((resolve) => setTimeout(resolve, 100));
      expired = (await store.getItem(['session', 'scratch'], 'short')) === null;
    }
    expect(expired).toBe(true);
    const left = await store.searchItems(['session']);
    expect(left.items.map((item) => item.key)).toEqual(['kept']);
  });

  it('an item with a short TTL read with refresh_ttl outlives one read without', async () => {
    const store = lg.alice.store;
    // 0.02 minutes: 1.2 s each. Every 100 ms one item is read with refresh (a get, a search)
    // and the other without, until the latter expires.
    await store.putItem(['session', 'fresh'], 'by-get', { kind: 'g' }, { ttl: 0.02 });
    await store.putItem(['session', 'fresh'], 'by-search', { kind: 's' }, { ttl: 0.02 });
    await store.putItem(['session', 'fresh'], 'unread', { kind: 'u' }, { ttl: 0.02 });
    let expired = false;
    for (let attempt = 0; attempt < 100 && !expired; attempt += 1) {
      await new Promise((resolve) => setTimeout(resolve, 100));
      expect(
        (await store.getItem(['session', 'fresh'], 'by-get', { refreshTtl: true }))?.value,
      ).toEqual({ kind: 'g' });
      const found = await store.searchItems(['session', 'fresh'], {
        filter: { kind: 's' },
        refreshTtl: true,
      });
      expect(found.items.map((item) => item.key)).toEqual(['by-search']);
      expired =
        (await store.getItem(['session', 'fresh'], 'unread', { refreshTtl: false })) === null;
    }
    expect(expired).toBe(true);
    const left = await store.searchItems(['session', 'fresh']);
    expect(left.items.map((item) => item.key).sort()).toEqual(['by-get', 'by-search']);
  });

  it("keeps each tenant's items to itself", async () => {
    await lg.alice.store.putItem(['shared-name'], 'secret', { owner: 'alice' });
    expect(await lg.bob.store.getItem(['shared-name'], 'secret')).toBeNull();
    expect((await lg.bob.store.searchItems(['shared-name'])).items).toEqual([]);
    expect((await lg.bob.store.listNamespaces({ prefix: ['shared-name'] })).namespaces).toEqual([]);
    // Bob writing the same namespace and key makes his own item; deleting it leaves Alice's.
    await lg.bob.store.putItem(['shared-name'], 'secret', { owner: 'bob' });
    await lg.bob.store.deleteItem(['shared-name'], 'secret');
    expect((await lg.alice.store.getItem(['shared-name'], 'secret'))?.value).toEqual({
      owner: 'alice',
    });
  });

  it("gives a graph's nodes the tenant's store (config.store)", async () => {
    // The `notes` graph keeps its input under ["memories"] and answers every note it finds there.
    const wait = async (client: typeof lg.alice, text: string) => {
      const thread = await client.threads.create();
      return (await client.runs.wait(thread.thread_id, 'notes', { input: { text } })) as {
        text: string;
      };
    };
    expect((await wait(lg.alice, 'buy milk')).text).toBe('buy milk');
    expect((await wait(lg.alice, 'call mum')).text).toBe('buy milk | call mum');
    // What the graph wrote is the tenant's own store, as the API reads it.
    const written = await lg.alice.store.searchItems(['memories']);
    expect(written.items.map((item) => String(item.value['text'])).sort()).toEqual([
      'buy milk',
      'call mum',
    ]);
    expect((await wait(lg.bob, 'water plants')).text).toBe('water plants');
    expect((await lg.bob.store.searchItems(['memories'])).items).toHaveLength(1);
  });

  it('names the field of bad input (422) and stores nothing', async () => {
    // The SDK refuses a label with a "." itself, so these go over plain HTTP like any client.
    const send = async (method: string, path: string, body?: unknown) => {
      const response = await fetch(`${lg.server.url}${path}`, {
        method,
        headers: { 'x-api-key': ALICE, 'content-type': 'application/json' },
        ...(body === undefined ? {} : { body: JSON.stringify(body) }),
      });
      return {
        status: response.status,
        paths: ((await response.json()) as { errors?: { path: string }[] }).errors?.map(
          (e) => e.path,
        ),
      };
    };
    expect(await send('PUT', '/store/items', { namespace: ['a.b'], key: 'k', value: {} })).toEqual({
      status: 422,
      paths: ['body.namespace.0'],
    });
    expect(await send('PUT', '/store/items', { namespace: [], key: 'k', value: {} })).toEqual({
      status: 422,
      paths: ['body.namespace'],
    });
    expect(await send('PUT', '/store/items', { namespace: ['a'], key: 'k', value: [1] })).toEqual({
      status: 422,
      paths: ['body.value'],
    });
    expect(
      await send('PUT', '/store/items', { namespace: ['a'], key: 'k', value: {}, ttl: -1 }),
    ).toEqual({ status: 422, paths: ['body.ttl'] });
    expect(await send('GET', '/store/items?namespace=a')).toEqual({
      status: 422,
      paths: ['query.key'],
    });
    expect(
      await send('POST', '/store/items/search', { namespace_prefix: ['a'], limit: 0 }),
    ).toEqual({ status: 422, paths: ['body.limit'] });
    expect(
      await send('POST', '/store/items/search', { namespace_prefix: ['a'], refresh_ttl: 'yes' }),
    ).toEqual({ status: 422, paths: ['body.refresh_ttl'] });
    expect(await send('GET', '/store/items?namespace=a&key=k&refresh_ttl=yes')).toEqual({
      status: 422,
      paths: ['query.refresh_ttl'],
    });
    expect(await lg.alice.store.searchItems(['a'])).toEqual({ items: [] });
  });
});
