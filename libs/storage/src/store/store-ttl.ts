import type {
  BaseStore,
  GetOperation,
  Item,
  Operation,
  PutOperation,
  SearchItem,
  SearchOperation,
} from '@langchain/langgraph-checkpoint';
import { BaseStore as BaseStoreClass, validateNamespace } from '@langchain/langgraph-checkpoint';
import { StorageError } from '../errors';

/**
 * Options of a store write. `ttl` is in minutes (fractions allowed), as in LangGraph's
 * PostgresStore: the item stops being visible to get/search/listNamespaces once it expires, and
 * a later write without `ttl` makes it permanent again.
 */
export interface StorePutOptions {
  ttl?: number | null;
}

/** A put operation that carries its TTL through `batch()` (LangGraph's type has no slot for it). */
export type TtlPutOperation = PutOperation & { ttl?: number | null };

/**
 * Options of a store read. `refreshTtl: true` extends the expiry of each item read (the one got,
 * the ones a search returns) that was written with a TTL to now + that TTL, as LangGraph's
 * `refresh_ttl`; items without a TTL are untouched. Absent or false: the expiry stays.
 */
export interface StoreReadOptions {
  refreshTtl?: boolean;
}

/** Options of `search` on our stores: LangGraph's, plus `refreshTtl`. */
export type StoreSearchOptions = NonNullable<Parameters<BaseStore['search']>[1]> & StoreReadOptions;

/** Get and search operations that carry `refreshTtl` through `batch()` (as `ttl` on puts). */
export type RefreshingGetOperation = GetOperation & StoreReadOptions;
export type RefreshingSearchOperation = SearchOperation & StoreReadOptions;

/**
 * A `BaseStore` whose `put` takes a fifth `options` argument with a TTL. Every store of a
 * `StorageBackend` is one; use `putWithTtl` to write through the `BaseStore` type.
 */
export interface TtlCapableStore extends BaseStore {
  get(namespace: string[], key: string, options?: StoreReadOptions): Promise<Item | null>;
  search(namespacePrefix: string[], options?: StoreSearchOptions): Promise<SearchItem[]>;
  put(
    namespace: string[],
    key: string,
    value: Record<string, unknown>,
    index?: false | string[],
    options?: StorePutOptions,
  ): Promise<void>;
}

/**
 * Base class for our stores: `put(namespace, key, value, index, { ttl })` forwards the TTL to
 * `batch()` on the put operation, and `get`/`search` with `{ refreshTtl }` forward it on the get
 * or search operation, so wrappers (scopedStore) and backends see both in one place.
 */
export abstract class TtlAwareStore extends BaseStoreClass implements TtlCapableStore {
  override async get(
    namespace: string[],
    key: string,
    options?: StoreReadOptions,
  ): Promise<Item | null> {
    validateNamespace(namespace, { allowEmpty: true, allowReservedRoot: true });
    const operation: RefreshingGetOperation = { namespace, key };
    if (options?.refreshTtl) operation.refreshTtl = true;
    const [item] = await this.batch([operation]);
    return item ?? null;
  }

  override async search(
    namespacePrefix: string[],
    options: StoreSearchOptions = {},
  ): Promise<SearchItem[]> {
    validateNamespace(namespacePrefix, { allowEmpty: true, allowReservedRoot: true });
    const { filter, limit = 10, offset = 0, query, refreshTtl } = options;
    const operation: RefreshingSearchOperation = { namespacePrefix, filter, limit, offset, query };
    if (refreshTtl) operation.refreshTtl = true;
    const [items] = await this.batch([operation]);
    return items ?? [];
  }

  override async put(
    namespace: string[],
    key: string,
    value: Record<string, unknown>,
    index?: false | string[],
    options?: StorePutOptions,
  ): Promise<void> {
    validateNamespace(namespace);
    const operation: TtlPutOperation = { namespace, key, value, index };
    if (options?.ttl !== undefined) operation.ttl = options.ttl;
    await this.batch([operation]);
  }
}

/** Writes an item with a TTL (minutes) through any store of a StorageBackend. */
export function putWithTtl(
  store: BaseStore,
  namespace: string[],
  key: string,
  value: Record<string, unknown>,
  ttlMinutes: number,
): Promise<void> {
  const ttlStore: TtlCapableStore = store;
  return ttlStore.put(namespace, key, value, undefined, { ttl: ttlMinutes });
}

/** Whether a get or search operation asks for its items' TTLs to be refreshed. */
export function refreshesTtl(operation: Operation): boolean {
  return (operation as RefreshingGetOperation | RefreshingSearchOperation).refreshTtl === true;
}

/** The TTL carried by a put operation, validated: a positive finite number of minutes or none. */
export function ttlOfPut(operation: PutOperation): number | null {
  const ttl = (operation as TtlPutOperation).ttl;
  if (ttl === undefined || ttl === null) return null;
  if (typeof ttl !== 'number' || !Number.isFinite(ttl) || ttl <= 0) {
    throw new StorageError(
      'VALIDATION_ERROR',
      'Invalid store item: ttl must be a positive number of minutes',
      {
        issues: [{ path: 'ttl', message: 'must be a positive number of minutes' }],
      },
    );
  }
  return ttl;
}

/** The expiry instant of an item written at `now` with `ttlMinutes`, or null for no expiry. */
export function expiresAtFor(ttlMinutes: number | null, now: Date): Date | null {
  return ttlMinutes === null ? null : new Date(now.getTime() + ttlMinutes * 60_000);
}
