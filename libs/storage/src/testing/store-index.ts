import type { BaseStore } from '@langchain/langgraph-checkpoint';
import type { StoreEmbedder, StoreIndexConfig } from '../store/store-index';
import { scopedStore } from '../store/scoped-store';
import type { StoreConformanceHarness } from './harness';

/**
 * A deterministic embedding for tests: each lower-cased word adds 1 to the dimension its hash
 * picks, so texts sharing words are close and a text is closest to itself. The e2e specs'
 * fake embeddings endpoint answers the same vectors.
 */
export function fakeEmbedding(text: string, dims: number): number[] {
  const vector = new Array<number>(dims).fill(0);
  for (const word of text.toLowerCase().match(/[a-z0-9]+/g) ?? []) {
    let hash = 2166136261;
    for (let i = 0; i < word.length; i += 1) {
      hash = Math.imul(hash ^ word.charCodeAt(i), 16777619) >>> 0;
    }
    vector[hash % dims] = (vector[hash % dims] ?? 0) + 1;
  }
  return vector;
}

/** A `StoreEmbedder` over `fakeEmbedding` that records the texts it was asked to embed. */
export function fakeEmbedder(dims: number): StoreEmbedder & { documents: string[]; fail: boolean } {
  const embedder = {
    documents: [] as string[],
    fail: false,
    embedDocuments(texts: string[]) {
      if (embedder.fail) return Promise.reject(new Error('embeddings endpoint down (fake)'));
      embedder.documents.push(...texts);
      return Promise.resolve(texts.map((text) => fakeEmbedding(text, dims)));
    },
    embedQuery(text: string) {
      if (embedder.fail) return Promise.reject(new Error('embeddings endpoint down (fake)'));
      return Promise.resolve(fakeEmbedding(text, dims));
    },
  };
  return embedder;
}

export type IndexedStoreHarnessFactory = (
  index: StoreIndexConfig,
) => Promise<StoreConformanceHarness>;

const DIMS = 256;

/**
 * Registers jest tests of a store with a semantic index (`langgraph.json`'s `store.index`): a
 * `query` ranks items by cosine similarity and answers `score`, together with the namespace
 * prefix, `filter`, `limit` and `offset`; items written with `index: false` (or without any text
 * at the indexed fields) are not found by a query; a re-put re-embeds; `fields` and a put's own
 * field list pick what is embedded; a failing embedder is an UNAVAILABLE StorageError naming
 * the cause; another scope's items are never found.
 */
export function runStoreIndexConformance(name: string, factory: IndexedStoreHarnessFactory): void {
  describe(`${name}: store semantic index`, () => {
    let harness: StoreConformanceHarness;
    let store: BaseStore;
    let embedder: ReturnType<typeof fakeEmbedder>;

    const open = async (fields?: string[]) => {
      embedder = fakeEmbedder(DIMS);
      harness = await factory({ dims: DIMS, embed: embedder, ...(fields ? { fields } : {}) });
      store = harness.store;
    };

    afterEach(async () => {
      await harness.cleanup();
    });

    it('ranks by cosine similarity with scores, within the prefix, filter, limit and offset', async () => {
      await open(['text']);
      await store.put(['docs', 'a'], 'tea', { text: 'green tea leaves', kind: 'drink' });
      await store.put(['docs', 'a'], 'coffee', { text: 'black coffee beans', kind: 'drink' });
      await store.put(['docs', 'b'], 'teapot', { text: 'a tea pot', kind: 'thing' });
      await store.put(['other'], 'tea2', { text: 'green tea leaves', kind: 'drink' });
      const found = await store.search(['docs'], { query: 'green tea', limit: 10 });
      expect(found.map((item) => item.key)).toEqual(['tea', 'teapot', 'coffee']);
      const [first, second, third] = found.map((item) => item.score as number);
      expect(first).toBeGreaterThan(second as number);
      expect(second).toBeGreaterThan(third as number);
      expect(first).toBeCloseTo(Math.sqrt(2 / 3), 5);
      expect(third).toBe(0);
      const filtered = await store.search(['docs'], {
        query: 'green tea',
        filter: { kind: 'drink' },
      });
      expect(filtered.map((item) => item.key)).toEqual(['tea', 'coffee']);
      const paged = await store.search(['docs'], { query: 'green tea', limit: 1, offset: 1 });
      expect(paged.map((item) => item.key)).toEqual(['teapot']);
      expect(await store.search(['docs', 'b'], { query: 'green tea' })).toHaveLength(1);
      // Without a query: unranked, no score.
      const plain = await store.search(['docs']);
      expect(plain.every((item) => item.score === undefined)).toBe(true);
    });

    it('embeds the whole value by default, each field path apart, and a put’s own list', async () => {
      await open();
      await store.put(['n'], 'whole', { title: 'alpha', body: 'beta' });
      expect(embedder.documents).toEqual([
        JSON.stringify({ title: 'alpha', body: 'beta' }, null, 2),
      ]);
      embedder.documents.length = 0;
      await store.put(['n'], 'fields', { title: 'gamma', tags: ['delta', 'epsilon'] }, [
        'title',
        'tags[*]',
      ]);
      expect(embedder.documents).toEqual(['gamma', 'delta', 'epsilon']);
      // The item's best field decides its score: a query equal to one tag scores 1.
      const [hit] = await store.search(['n'], { query: 'epsilon', limit: 1 });
      expect(hit?.key).toBe('fields');
      expect(hit?.score).toBeCloseTo(1, 5);
    });

    it('does not find items written with index: false or without text at the fields', async () => {
      await open(['text']);
      await store.put(['n'], 'hidden', { text: 'secret tea' }, false);
      await store.put(['n'], 'no-field', { other: 'tea' });
      await store.put(['n'], 'shown', { text: 'tea' });
      expect(embedder.documents).toEqual(['tea']);
      const found = await store.search(['n'], { query: 'tea' });
      expect(found.map((item) => item.key)).toEqual(['shown']);
      // They are still items: a get and a search without query find them.
      expect((await store.get(['n'], 'hidden'))?.value).toEqual({ text: 'secret tea' });
      expect(await store.search(['n'])).toHaveLength(3);
    });

    it('re-embeds an item written again; a re-put with index: false drops its vectors', async () => {
      await open(['text']);
      await store.put(['n'], 'k', { text: 'apples' });
      expect((await store.search(['n'], { query: 'apples' }))[0]?.score).toBeCloseTo(1, 5);
      await store.put(['n'], 'k', { text: 'oranges' });
      expect((await store.search(['n'], { query: 'apples' }))[0]?.score).toBe(0);
      expect((await store.search(['n'], { query: 'oranges' }))[0]?.score).toBeCloseTo(1, 5);
      await store.put(['n'], 'k', { text: 'oranges' }, false);
      expect(await store.search(['n'], { query: 'oranges' })).toEqual([]);
      await store.put(['n'], 'k', { text: 'pears' });
      await store.delete(['n'], 'k');
      expect(await store.search(['n'], { query: 'pears' })).toEqual([]);
    });

    it('never finds another scope’s items', async () => {
      await open(['text']);
      const a = scopedStore(store, { tenant: 'a' });
      const b = scopedStore(store, { tenant: 'b' });
      await a.put(['mem'], 'k', { text: 'likes tea' });
      await b.put(['mem'], 'k2', { text: 'likes tea too' });
      expect((await a.search(['mem'], { query: 'tea' })).map((item) => item.key)).toEqual(['k']);
      expect((await b.search(['mem'], { query: 'tea' })).map((item) => item.key)).toEqual(['k2']);
      expect((await a.search([], { query: 'tea' })).map((item) => item.namespace)).toEqual([
        ['mem'],
      ]);
    });

    it('fails with UNAVAILABLE naming the cause when the embedder fails, writing nothing', async () => {
      await open(['text']);
      embedder.fail = true;
      await expect(store.put(['n'], 'k', { text: 'tea' })).rejects.toMatchObject({
        code: 'UNAVAILABLE',
        message: expect.stringContaining('embeddings endpoint down (fake)') as unknown,
      });
      expect(await store.get(['n'], 'k')).toBeNull();
      await expect(store.search(['n'], { query: 'tea' })).rejects.toMatchObject({
        code: 'UNAVAILABLE',
      });
      // Writes that embed nothing do not need the embedder.
      await store.put(['n'], 'k', { text: 'tea' }, false);
      expect(await store.search(['n'])).toHaveLength(1);
    });
  });
}
