import { InMemoryStore } from '@langchain/langgraph-checkpoint';
import {
  SCOPE_NAMESPACE_ROOT,
  encodeNamespaceLabel,
  scopeNamespacePrefix,
  scopedStore,
  threadNamespaceLabel,
} from './scoped-store';
import { putWithTtl } from './store-ttl';

describe('scopeNamespacePrefix', () => {
  it('maps a scope to one label with sorted keys, the same for any key order', () => {
    expect(scopeNamespacePrefix({ user: 'alice', project: 'p1' })).toEqual([
      SCOPE_NAMESPACE_ROOT,
      'project=p1&user=alice',
    ]);
    expect(scopeNamespacePrefix({ project: 'p1', user: 'alice' })).toEqual(
      scopeNamespacePrefix({ user: 'alice', project: 'p1' }),
    );
    expect(scopeNamespacePrefix({})).toEqual([SCOPE_NAMESPACE_ROOT]);
  });

  it('encodes separators so different scopes never produce the same label', () => {
    const tricky = scopeNamespacePrefix({ user: 'a&project=p' });
    const honest = scopeNamespacePrefix({ user: 'a', project: 'p' });
    expect(tricky).not.toEqual(honest);
    expect(scopeNamespacePrefix({ 'k=v': 'x' })).not.toEqual(scopeNamespacePrefix({ k: 'v=x' }));
  });

  it('produces labels LangGraph accepts for values with dots, colons and non-ASCII', async () => {
    const store = new InMemoryStore();
    const scope = { email: 'alice@example.com', tenant: 'acme:eu', name: 'Zoë 漢字' };
    await store.put([...scopeNamespacePrefix(scope), 'x'], 'k', { v: 1 });
    await store.put([threadNamespaceLabel('thread.with:odd chars')], 'k', { v: 1 });
    expect(encodeNamespaceLabel('a.b:c')).toBe('a%2Eb%3Ac');
    expect(await store.search([], { limit: 10 })).toHaveLength(2);
  });
});

describe('scopedStore', () => {
  it('prefixes writes and strips the prefix from reads, searches and namespace lists', async () => {
    const inner = new InMemoryStore();
    const store = scopedStore(inner, { user: 'alice' });
    await store.put(['memories', 'food'], 'tea', { likes: true });
    const raw = await inner.search([], { limit: 10 });
    expect(raw.map((item) => item.namespace)).toEqual([
      [SCOPE_NAMESPACE_ROOT, 'user=alice', 'memories', 'food'],
    ]);
    expect((await store.get(['memories', 'food'], 'tea'))?.namespace).toEqual(['memories', 'food']);
    expect((await store.search(['memories'])).map((item) => item.namespace)).toEqual([
      ['memories', 'food'],
    ]);
    expect(await store.listNamespaces()).toEqual([['memories', 'food']]);
    expect(await store.listNamespaces({ maxDepth: 1 })).toEqual([['memories']]);
    expect(await store.listNamespaces({ prefix: ['memories'], suffix: ['food'] })).toEqual([
      ['memories', 'food'],
    ]);
  });

  it('hides other scopes and unscoped items', async () => {
    const inner = new InMemoryStore();
    await inner.put(['memories'], 'global', { v: 0 });
    await scopedStore(inner, { user: 'bob' }).put(['memories'], 'k', { v: 1 });
    const alice = scopedStore(inner, { user: 'alice' });
    expect(await alice.get(['memories'], 'k')).toBeNull();
    expect(await alice.search([])).toEqual([]);
    expect(await alice.listNamespaces()).toEqual([]);
    await alice.delete(['memories'], 'k');
    expect((await scopedStore(inner, { user: 'bob' }).get(['memories'], 'k'))?.value).toEqual({
      v: 1,
    });
  });

  it('lets the empty scope see every scoped item', async () => {
    const inner = new InMemoryStore();
    await scopedStore(inner, { user: 'bob' }).put(['memories'], 'k', { v: 1 });
    const admin = scopedStore(inner, {});
    expect((await admin.search([])).map((item) => item.namespace)).toEqual([
      ['user=bob', 'memories'],
    ]);
  });

  it('forwards the TTL of a put to the wrapped store', async () => {
    const seen: unknown[] = [];
    const inner = new InMemoryStore();
    const spy = jest.spyOn(inner, 'batch').mockImplementation((operations) => {
      seen.push(...operations);
      return Promise.resolve(operations.map(() => undefined) as never);
    });
    await putWithTtl(scopedStore(inner, { user: 'a' }), ['ns'], 'k', { v: 1 }, 5);
    expect(seen).toEqual([
      expect.objectContaining({
        namespace: [SCOPE_NAMESPACE_ROOT, 'user=a', 'ns'],
        key: 'k',
        ttl: 5,
      }),
    ]);
    spy.mockRestore();
  });
});
