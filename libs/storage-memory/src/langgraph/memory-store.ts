import type {
  GetOperation,
  Item,
  ListNamespacesOperation,
  MatchCondition,
  Operation,
  OperationResults,
  PutOperation,
  SearchItem,
  SearchOperation,
} from '@langchain/langgraph-checkpoint';
import type { ItemVector, StoreIndexConfig } from '@cognition/storage';
import {
  StoreIndex,
  TtlAwareStore,
  expiresAtFor,
  rankByVectors,
  refreshesTtl,
  storeFilterMatches,
  ttlOfPut,
} from '@cognition/storage';
import { clone } from '../clone';

interface StoredItem {
  namespace: string[];
  key: string;
  value: Record<string, unknown>;
  createdAt: Date;
  updatedAt: Date;
  expiresAt: Date | null;
  /** The TTL it was written with (minutes), which a refreshing read restarts. */
  ttlMinutes: number | null;
  /** Its vectors when the store has an index (one per embedded field path). */
  vectors: ItemVector[];
}

const namespaceKey = (namespace: readonly string[]): string => JSON.stringify(namespace);
const itemId = (item: StoredItem): string => JSON.stringify([item.namespace, item.key]);

function startsWith(namespace: readonly string[], prefix: readonly string[]): boolean {
  return (
    prefix.length <= namespace.length &&
    prefix.every((label, i) => label === '*' || namespace[i] === label)
  );
}

function endsWith(namespace: readonly string[], suffix: readonly string[]): boolean {
  const offset = namespace.length - suffix.length;
  return (
    offset >= 0 && suffix.every((label, i) => label === '*' || namespace[offset + i] === label)
  );
}

function matches(namespace: readonly string[], condition: MatchCondition): boolean {
  return condition.matchType === 'prefix'
    ? startsWith(namespace, condition.path)
    : endsWith(namespace, condition.path);
}

/**
 * An in-process LangGraph `BaseStore` with TTL (`put(..., { ttl })`, minutes). Expired items are
 * invisible from the instant they expire and are swept on the next write. A read with
 * `{ refreshTtl: true }` moves the expiry of each item it returns to now + its TTL. Values are copied in
 * and out, so callers never share state with the store. With an `index` (`StoreIndexConfig`), a
 * put embeds its texts first (nothing is applied when that fails) and a search with `query`
 * ranks the items that have vectors by cosine similarity (`score`); without one a query is
 * ignored and results are filtered and ordered only.
 */
export class MemoryStore extends TtlAwareStore {
  private readonly items = new Map<string, Map<string, StoredItem>>();
  private lastSweep = 0;
  private readonly index: StoreIndex | null;

  constructor(
    private readonly now: () => Date = () => new Date(),
    index?: StoreIndexConfig,
  ) {
    super();
    this.index = index ? new StoreIndex(index) : null;
  }

  override async batch<Op extends Operation[]>(operations: Op): Promise<OperationResults<Op>> {
    // Embeddings first (the only asynchronous part): a failure leaves the store untouched.
    const vectors = new Map<Operation, ItemVector[]>();
    const queries = new Map<Operation, Float32Array>();
    if (this.index) {
      const puts = operations.filter((op): op is PutOperation => 'value' in op);
      (await this.index.embedPuts(puts)).forEach((v, i) => vectors.set(puts[i] as Operation, v));
      for (const op of operations) {
        if ('namespacePrefix' in op && op.query) {
          queries.set(op, await this.index.embedQuery(op.query));
        }
      }
    }
    return operations.map((operation) =>
      this.apply(operation, vectors.get(operation) ?? [], queries.get(operation)),
    ) as OperationResults<Op>;
  }

  /** Deletes every item whose namespace contains `label` (a thread's items on session delete). */
  deleteWhereNamespaceContains(label: string): number {
    let deleted = 0;
    for (const [key, bucket] of this.items) {
      const first = bucket.values().next().value;
      if (first?.namespace.includes(label)) {
        deleted += bucket.size;
        this.items.delete(key);
      }
    }
    return deleted;
  }

  private apply(operation: Operation, vectors: ItemVector[], query?: Float32Array): unknown {
    if ('namespacePrefix' in operation) return this.searchItems(operation, query);
    if ('namespace' in operation) {
      return 'value' in operation ? this.putOne(operation, vectors) : this.getOne(operation);
    }
    return this.listNamespacesOf(operation);
  }

  private live(item: StoredItem, now: Date): boolean {
    return item.expiresAt === null || item.expiresAt.getTime() > now.getTime();
  }

  private toItem(item: StoredItem): Item {
    return {
      namespace: [...item.namespace],
      key: item.key,
      value: clone(item.value),
      createdAt: new Date(item.createdAt),
      updatedAt: new Date(item.updatedAt),
    };
  }

  private getOne(operation: GetOperation): Item | null {
    const now = this.now();
    const item = this.items.get(namespaceKey(operation.namespace))?.get(operation.key);
    if (!item || !this.live(item, now)) return null;
    if (refreshesTtl(operation)) this.refresh(item, now);
    return this.toItem(item);
  }

  private refresh(item: StoredItem, now: Date): void {
    if (item.ttlMinutes !== null) item.expiresAt = expiresAtFor(item.ttlMinutes, now);
  }

  private putOne(operation: PutOperation, vectors: ItemVector[]): void {
    const now = this.now();
    const ttl = operation.value === null ? null : ttlOfPut(operation);
    this.sweep(now);
    const bucketKey = namespaceKey(operation.namespace);
    const bucket = this.items.get(bucketKey) ?? new Map<string, StoredItem>();
    if (operation.value === null) {
      bucket.delete(operation.key);
      if (bucket.size === 0) this.items.delete(bucketKey);
      return;
    }
    const previous = bucket.get(operation.key);
    bucket.set(operation.key, {
      namespace: [...operation.namespace],
      key: operation.key,
      value: clone(operation.value),
      createdAt: previous && this.live(previous, now) ? previous.createdAt : now,
      updatedAt: now,
      expiresAt: expiresAtFor(ttl, now),
      ttlMinutes: ttl,
      vectors,
    });
    this.items.set(bucketKey, bucket);
  }

  private liveItems(now: Date): StoredItem[] {
    const all: StoredItem[] = [];
    for (const bucket of this.items.values()) {
      for (const item of bucket.values()) if (this.live(item, now)) all.push(item);
    }
    return all;
  }

  private searchItems(operation: SearchOperation, query?: Float32Array): SearchItem[] {
    const now = this.now();
    const candidates = this.liveItems(now)
      .filter((item) => startsWith(item.namespace, operation.namespacePrefix))
      .filter((item) => storeFilterMatches(item.value, operation.filter));
    const offset = operation.offset ?? 0;
    const limit = operation.limit ?? 10;
    if (query) {
      // Only items with vectors are found by a query, best vector first (LangGraph's PostgresStore).
      const byId = new Map(candidates.map((item) => [itemId(item), item]));
      const ranked = rankByVectors(
        query,
        candidates.flatMap((item) =>
          item.vectors.map((v) => ({ id: itemId(item), vector: v.vector })),
        ),
      ).slice(offset, offset + limit);
      const page = ranked.map(({ id, score }) => ({ item: byId.get(id) as StoredItem, score }));
      if (refreshesTtl(operation)) for (const { item } of page) this.refresh(item, now);
      return page.map(({ item, score }) => ({ ...this.toItem(item), score }));
    }
    const found = candidates.sort(
      (a, b) =>
        b.updatedAt.getTime() - a.updatedAt.getTime() ||
        namespaceKey(a.namespace).localeCompare(namespaceKey(b.namespace)) ||
        a.key.localeCompare(b.key),
    );
    const page = found.slice(offset, offset + limit);
    if (refreshesTtl(operation)) for (const item of page) this.refresh(item, now);
    return page.map((item) => this.toItem(item));
  }

  private listNamespacesOf(operation: ListNamespacesOperation): string[][] {
    const now = this.now();
    const seen = new Map<string, string[]>();
    for (const item of this.liveItems(now)) {
      if (
        !(operation.matchConditions ?? []).every((condition) => matches(item.namespace, condition))
      )
        continue;
      const namespace =
        operation.maxDepth === undefined
          ? item.namespace
          : item.namespace.slice(0, operation.maxDepth);
      seen.set(namespaceKey(namespace), namespace);
    }
    const sorted = [...seen.entries()]
      .sort(([a], [b]) => a.localeCompare(b))
      .map(([, ns]) => [...ns]);
    return sorted.slice(operation.offset, operation.offset + operation.limit);
  }

  /** Drops expired items, at most once a second so writes stay O(1) in the common case. */
  private sweep(now: Date): void {
    if (now.getTime() - this.lastSweep < 1000) return;
    this.lastSweep = now.getTime();
    for (const [key, bucket] of this.items) {
      for (const [itemKey, item] of bucket) if (!this.live(item, now)) bucket.delete(itemKey);
      if (bucket.size === 0) this.items.delete(key);
    }
  }
}
