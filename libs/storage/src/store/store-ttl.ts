import type { BaseStore, PutOperation } from '@langchain/langgraph-checkpoint';
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
 * A `BaseStore` whose `put` takes a fifth `options` argument with a TTL. Every store of a
 * `StorageBackend` is one; use `putWithTtl` to write through the `BaseStore` type.
 */
export interface TtlCapableStore extends BaseStore {
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
 * `batch()` on the put operation, so wrappers (scopedStore) and backends see it in one place.
 */
export abstract class TtlAwareStore extends BaseStoreClass implements TtlCapableStore {
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
