import type { FieldIssue } from '@cognition/contracts';
import type { ItemVector, StoreIndexConfig } from '@cognition/storage';
import {
  StorageError,
  StoreIndex,
  TtlAwareStore,
  expiresAtFor,
  refreshesTtl,
  storeFilterMatches,
  ttlOfPut,
} from '@cognition/storage';
import type {
  Item,
  ListNamespacesOperation,
  MatchCondition,
  Operation,
  OperationResults,
  PutOperation,
  SearchItem,
  SearchOperation,
} from '@langchain/langgraph-checkpoint';
import type { PrismaDb } from '../db/db';
import { guard } from '../db/errors';
import type { Prisma } from '../generated/postgres/client';
import {
  NAMESPACE_SEPARATOR,
  assertStorableString,
  decodeNamespace,
  encodeNamespace,
  namespaceHasPrefix,
} from './namespace';
import type { StoreRow } from './store-rows';
import { ROW_SELECT, live, prefixCandidates, toItem } from './store-rows';
import { replaceVectors, searchByVector } from './store-vectors';

export interface PrismaStoreOptions {
  /**
   * With `start()`, expired items are deleted every this many minutes (default 5). Writes also
   * sweep, at most once per interval, so a store that is never started stays bounded too.
   */
  sweepIntervalMinutes?: number;
  /** Clock, for tests. */
  now?: () => Date;
  /** The semantic index (`langgraph.json`'s `store.index`); none: a `query` ranks nothing. */
  index?: StoreIndexConfig;
}

/** Rows per query while a search walks its candidates (filters are applied in process). */
const SEARCH_PAGE_SIZE = 256;
const DEFAULT_SWEEP_INTERVAL_MINUTES = 5;

interface PreparedPut {
  namespace: string;
  key: string;
  /** JSON text, or null for a delete. */
  value: string | null;
  ttlMinutes: number | null;
  /** With an index: the item's vectors, which replace those it had; null without one. */
  vectors: ItemVector[] | null;
}

/**
 * LangGraph `BaseStore` on the `store_items` table (SQLite or PostgreSQL), with the semantics of
 * `@cognition/storage-memory`'s MemoryStore so every backend behaves alike:
 * - namespaces are stored as their labels joined with U+001F (see `namespace.ts`); values as
 *   JSON text, so what comes back is the JSON round trip of what was put;
 * - in one `batch`, reads (get, search, listNamespaces) see the state before the batch; the
 *   batch's puts are then applied in one transaction, the last put of a (namespace, key) winning;
 *   a put of `null` deletes;
 * - `put(..., { ttl })` (minutes, see `TtlAwareStore`) sets `expires_at`; expired items are
 *   invisible to every read from the instant they expire, are swept by writes and by the
 *   `start()` timer, and a put over an expired item starts it afresh (new `createdAt`).
 *   The TTL is kept (`ttl_minutes`): a get or search with `{ refreshTtl: true }` moves the
 *   expiry of each item it returns to now + its TTL (only while the item is the version read);
 *   other reads leave it;
 * - search filters match top-level value fields exactly (deep equality) or with `$eq`, `$ne`,
 *   `$gt`, `$gte`, `$lt`, `$lte`; results are newest `updatedAt` first;
 * - with an `index`, a batch embeds its puts' texts before anything is written (a failing
 *   embedder fails the batch, writing nothing), each put replaces the item's vectors in
 *   `store_vectors`, and a search with `query` ranks by cosine similarity (`score`, see
 *   `store-vectors.ts`); without one `query` is ignored and `score` is undefined, as in an
 *   InMemoryStore without embeddings.
 */
export class PrismaStore extends TtlAwareStore {
  private readonly now: () => Date;
  private readonly sweepIntervalMs: number;
  private lastSweep = 0;
  private timer: NodeJS.Timeout | undefined;
  private readonly index: StoreIndex | null;

  constructor(
    private readonly db: PrismaDb,
    options: PrismaStoreOptions = {},
  ) {
    super();
    this.now = options.now ?? (() => new Date());
    const minutes = options.sweepIntervalMinutes ?? DEFAULT_SWEEP_INTERVAL_MINUTES;
    if (!Number.isFinite(minutes) || minutes <= 0) {
      throw invalid('sweepIntervalMinutes', 'must be a positive number of minutes');
    }
    this.sweepIntervalMs = minutes * 60_000;
    this.index = options.index ? new StoreIndex(options.index) : null;
  }

  override async batch<Op extends Operation[]>(operations: Op): Promise<OperationResults<Op>> {
    const prepared = operations.map((operation, index) => prepare(operation, index));
    if (this.index) {
      const puts = prepared.flatMap((p, i) => (p.kind === 'put' ? [[p.put, i] as const] : []));
      const vectors = await this.index.embedPuts(
        puts.map(([, i]) => operations[i] as PutOperation),
      );
      puts.forEach(([put], n) => (put.vectors = put.value === null ? null : (vectors[n] ?? [])));
    }
    const now = this.now();
    const results = await Promise.all(
      prepared.map((operation): Promise<unknown> => {
        switch (operation.kind) {
          case 'get':
            return this.getItem(operation.namespace, operation.key, now, operation.refresh);
          case 'search':
            return this.searchItems(operation.operation, operation.prefix, now, operation.refresh);
          case 'list':
            return this.listNamespacesOf(operation.operation, now);
          case 'put':
            return Promise.resolve(undefined);
        }
      }),
    );
    const puts = new Map<string, PreparedPut>();
    for (const operation of prepared) {
      if (operation.kind !== 'put') continue;
      const id = JSON.stringify([operation.put.namespace, operation.put.key]);
      puts.delete(id);
      puts.set(id, operation.put);
    }
    if (puts.size > 0) await this.applyPuts([...puts.values()], now);
    return results as OperationResults<Op>;
  }

  /** Deletes every expired item now; returns how many. */
  async sweepExpired(): Promise<number> {
    const now = this.now();
    this.lastSweep = now.getTime();
    const { count } = await guard('Cannot sweep expired store items', () =>
      this.db.storeItem.deleteMany({ where: { expiresAt: { lte: now } } }),
    );
    return count;
  }

  /** Starts the periodic sweep of expired items (idempotent; the timer never keeps Node alive). */
  override start(): void {
    if (this.timer) return;
    this.timer = setInterval(() => {
      // A failed sweep is retried on the next tick; expired items stay invisible meanwhile.
      this.sweepExpired().catch(() => undefined);
    }, this.sweepIntervalMs);
    this.timer.unref();
  }

  override stop(): void {
    if (this.timer) clearInterval(this.timer);
    this.timer = undefined;
  }

  private async getItem(
    namespace: string,
    key: string,
    now: Date,
    refresh: boolean,
  ): Promise<Item | null> {
    const row = await guard('Cannot read store item', () =>
      this.db.storeItem.findFirst({
        where: { namespace, key, ...live(now) },
        select: ROW_SELECT,
      }),
    );
    if (row && refresh) await this.refreshTtls([row], now);
    return row ? toItem(row) : null;
  }

  /**
   * Moves the expiry of the rows read that carry a TTL to now + that TTL, each only while it is
   * still the version read (same `updated_at`) and live: a put in between keeps its own expiry.
   */
  private async refreshTtls(rows: StoreRow[], now: Date): Promise<void> {
    const queries = rows.flatMap((row) =>
      row.ttlMinutes === null
        ? []
        : [
            this.db.storeItem.updateMany({
              where: {
                namespace: row.namespace,
                key: row.key,
                updatedAt: row.updatedAt,
                ...live(now),
              },
              data: { expiresAt: expiresAtFor(row.ttlMinutes, now) },
            }),
          ],
    );
    if (queries.length === 0) return;
    await guard('Cannot refresh store item TTLs', () => this.db.$transaction(queries));
  }

  /**
   * Walks the live candidates under the prefix newest first, page by page, applying the exact
   * prefix check and the filter in process until `offset + limit` items matched.
   */
  private async searchItems(
    operation: SearchOperation,
    prefix: string,
    now: Date,
    refresh: boolean,
  ): Promise<SearchItem[]> {
    if (this.index && operation.query) {
      const query = await this.index.embedQuery(operation.query);
      const ranked = await searchByVector(this.db, operation, prefix, query, now);
      if (refresh)
        await this.refreshTtls(
          ranked.map(({ row }) => row),
          now,
        );
      return ranked.map(({ row, score }) => ({ ...toItem(row), score }));
    }
    const offset = operation.offset ?? 0;
    const limit = operation.limit ?? 10;
    if (limit <= 0) return [];
    const where: Prisma.StoreItemWhereInput = { AND: [live(now), prefixCandidates(prefix)] };
    const matched: StoreRow[] = [];
    const done = async (): Promise<SearchItem[]> => {
      const page = matched.slice(offset);
      if (refresh) await this.refreshTtls(page, now);
      return page.map((row) => ({ ...toItem(row), score: undefined }));
    };
    for (let skip = 0; ; skip += SEARCH_PAGE_SIZE) {
      const rows = await guard('Cannot search store items', () =>
        this.db.storeItem.findMany({
          where,
          orderBy: [{ updatedAt: 'desc' }, { namespace: 'asc' }, { key: 'asc' }],
          select: ROW_SELECT,
          skip,
          take: SEARCH_PAGE_SIZE,
        }),
      );
      for (const row of rows) {
        if (!namespaceHasPrefix(row.namespace, prefix)) continue;
        const value = JSON.parse(row.value) as Record<string, unknown>;
        if (!storeFilterMatches(value, operation.filter)) continue;
        matched.push(row);
        if (matched.length >= offset + limit) return done();
      }
      if (rows.length < SEARCH_PAGE_SIZE) return done();
    }
  }

  private async listNamespacesOf(
    operation: ListNamespacesOperation,
    now: Date,
  ): Promise<string[][]> {
    const conditions = operation.matchConditions ?? [];
    // The literal labels a prefix condition starts with narrow the query; the rest is exact,
    // in process.
    const literal: string[] = [];
    for (const label of conditions.find((c) => c.matchType === 'prefix')?.path ?? []) {
      if (label === '*') break;
      literal.push(label);
    }
    // A label no namespace can hold matches nothing.
    if (literal.some((label) => label === '' || label.includes(NAMESPACE_SEPARATOR))) return [];
    const rows = await guard('Cannot list store namespaces', () =>
      this.db.storeItem.findMany({
        where: { AND: [live(now), prefixCandidates(encodeNamespace(literal))] },
        select: { namespace: true },
        distinct: ['namespace'],
      }),
    );
    const seen = new Map<string, string[]>();
    for (const row of rows) {
      const labels = decodeNamespace(row.namespace);
      if (!conditions.every((condition) => matches(labels, condition))) continue;
      const namespace =
        operation.maxDepth === undefined ? labels : labels.slice(0, operation.maxDepth);
      seen.set(JSON.stringify(namespace), namespace);
    }
    const offset = operation.offset ?? 0;
    const limit = operation.limit ?? seen.size;
    return [...seen.entries()]
      .sort(([a], [b]) => a.localeCompare(b))
      .map(([, namespace]) => namespace)
      .slice(offset, offset + limit);
  }

  /**
   * One transaction: items the puts address that already expired are removed first (so a put
   * over them starts afresh), then each put upserts or deletes; a due sweep rides along.
   */
  private async applyPuts(puts: PreparedPut[], now: Date): Promise<void> {
    const sweepDue = now.getTime() - this.lastSweep >= this.sweepIntervalMs;
    const queries: Prisma.PrismaPromise<unknown>[] = [
      this.db.storeItem.deleteMany({
        where: sweepDue
          ? { expiresAt: { lte: now } }
          : {
              expiresAt: { lte: now },
              OR: puts.map(({ namespace, key }) => ({ namespace, key })),
            },
      }),
    ];
    for (const put of puts) {
      const id = { namespace: put.namespace, key: put.key };
      if (put.value === null) {
        queries.push(this.db.storeItem.deleteMany({ where: id }));
        continue;
      }
      const expiresAt = expiresAtFor(put.ttlMinutes, now);
      queries.push(
        this.db.storeItem.upsert({
          where: { namespace_key: id },
          create: {
            ...id,
            value: put.value,
            createdAt: now,
            updatedAt: now,
            expiresAt,
            ttlMinutes: put.ttlMinutes,
          },
          update: { value: put.value, updatedAt: now, expiresAt, ttlMinutes: put.ttlMinutes },
          select: { key: true },
        }),
      );
      if (put.vectors) queries.push(...replaceVectors(this.db, id, put.vectors));
    }
    await guard('Cannot write store items', () => this.db.$transaction(queries));
    if (sweepDue) this.lastSweep = now.getTime();
  }
}

type PreparedOperation =
  | { kind: 'get'; namespace: string; key: string; refresh: boolean }
  | { kind: 'search'; operation: SearchOperation; prefix: string; refresh: boolean }
  | { kind: 'list'; operation: ListNamespacesOperation }
  | { kind: 'put'; put: PreparedPut };

/** Validates one operation up front, so a bad batch fails before touching the database. */
function prepare(operation: Operation, index: number): PreparedOperation {
  const field = `operations[${index}]`;
  if ('namespacePrefix' in operation) {
    const prefix = encodeNamespace(operation.namespacePrefix, `${field}.namespacePrefix`);
    assertPaging(operation.limit, `${field}.limit`);
    assertPaging(operation.offset, `${field}.offset`);
    return { kind: 'search', operation, prefix, refresh: refreshesTtl(operation) };
  }
  if ('namespace' in operation) {
    const namespace = encodeNamespace(operation.namespace, `${field}.namespace`);
    assertStorableString(operation.key, `${field}.key`);
    if (!('value' in operation)) {
      return { kind: 'get', namespace, key: operation.key, refresh: refreshesTtl(operation) };
    }
    return { kind: 'put', put: preparePut(operation, namespace, field) };
  }
  for (const [i, condition] of (operation.matchConditions ?? []).entries()) {
    condition.path.forEach((label, j) =>
      assertStorableString(label, `${field}.matchConditions[${i}].path[${j}]`),
    );
  }
  assertPaging(operation.limit, `${field}.limit`);
  assertPaging(operation.offset, `${field}.offset`);
  if (operation.maxDepth !== undefined) assertPaging(operation.maxDepth, `${field}.maxDepth`);
  return { kind: 'list', operation };
}

function preparePut(operation: PutOperation, namespace: string, field: string): PreparedPut {
  if (namespace === '') throw invalid(`${field}.namespace`, 'must have at least one label');
  if (operation.value === null) {
    return { namespace, key: operation.key, value: null, ttlMinutes: null, vectors: null };
  }
  const value: unknown = operation.value;
  if (typeof value !== 'object' || Array.isArray(value)) {
    throw invalid(`${field}.value`, 'must be an object (or null to delete)');
  }
  let json: string;
  try {
    json = JSON.stringify(value);
  } catch (error) {
    throw invalid(
      `${field}.value`,
      `must be JSON-serializable (${error instanceof Error ? error.message : String(error)})`,
    );
  }
  return {
    namespace,
    key: operation.key,
    value: json,
    ttlMinutes: ttlOfPut(operation),
    vectors: null,
  };
}

function assertPaging(value: unknown, field: string): void {
  if (value === undefined) return;
  if (typeof value !== 'number' || !Number.isInteger(value) || value < 0) {
    throw invalid(field, 'must be a non-negative integer');
  }
}

function matches(namespace: readonly string[], condition: MatchCondition): boolean {
  const { path } = condition;
  const offset = condition.matchType === 'prefix' ? 0 : namespace.length - path.length;
  return (
    offset >= 0 &&
    path.length <= namespace.length &&
    path.every((label, i) => label === '*' || namespace[offset + i] === label)
  );
}

function invalid(field: string, message: string): StorageError {
  const issues: FieldIssue[] = [{ path: field, message }];
  return new StorageError('VALIDATION_ERROR', `Invalid ${field}: ${message}`, { issues });
}
