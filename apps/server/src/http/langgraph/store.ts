import type { Caller } from '@cognition/api';
import type { TtlCapableStore } from '@cognition/storage';
import { scopedStore } from '@cognition/storage';
import type { BaseStore, Item } from '@langchain/langgraph-checkpoint';
import type { Request } from 'express';
import { z } from 'zod';
import { JsonObject, parsePart } from './wire';

/**
 * The LangGraph store API (`/store/items`, `/store/items/search`, `/store/namespaces`) over the
 * storage backend's store, each tenant confined to its own namespaces (`scopedStore`): another
 * tenant's items are never found, listed, overwritten or deleted. Shapes are those of
 * `@langchain/langgraph-sdk`'s `client.store` (docs/langgraph-api.md, "Store").
 */

/** A namespace label: LangGraph joins labels with `.` on the wire, so a label cannot hold one. */
const Label = z
  .string()
  .min(1, 'a namespace label cannot be empty')
  .refine((label) => !label.includes('.'), 'a namespace label cannot contain "."');
const Namespace = z.array(Label).min(1, 'a namespace needs at least one label');
/** LangGraph's TTLs are minutes (fractions allowed); `null` keeps the item forever. */
const Ttl = z.number().positive().finite().max(5_256_000).nullable();
const Limit = (fallback: number) => z.number().int().min(1).max(1000).default(fallback);
const Offset = z.number().int().min(0).max(1_000_000).default(0);
/**
 * `refresh_ttl`: a read that asks for it moves the expiry of each item it returns (written with a
 * TTL) to now + that TTL. Absent, nothing is refreshed: the SDK sends the field only when its
 * caller sets `refreshTtl`, and LangGraph's own default for an absent one is its server's TTL
 * configuration (`refresh_on_read`), which this server has none of; a plain read never changes
 * how long an item lives here.
 */
const RefreshQuery = z.enum(['true', 'false'], { message: 'must be "true" or "false"' });

export const StorePutSchema = z
  .object({
    namespace: Namespace,
    key: z.string().min(1),
    value: JsonObject,
    // What the store's semantic index embeds of this item: `false` nothing (a query never finds
    // it), a list of field paths instead of langgraph.json's `store.index.fields`; without an
    // index configured it has no effect, as in LangGraph's servers.
    index: z.union([z.literal(false), z.array(z.string().min(1))]).nullish(),
    ttl: Ttl.optional(),
  })
  .strict();

export const StoreDeleteSchema = z
  .object({ namespace: z.array(Label).default([]), key: z.string().min(1) })
  .strict();

/** The query of `GET /store/items`: the namespace as the SDK sends it, labels joined by `.`. */
export const StoreGetSchema = z
  .object({
    namespace: z.string().default(''),
    key: z.string().min(1),
    refresh_ttl: RefreshQuery.optional(),
  })
  .strict();

export const StoreSearchSchema = z
  .object({
    namespace_prefix: z.array(Label).default([]),
    filter: JsonObject.nullish(),
    limit: Limit(10),
    offset: Offset,
    query: z.string().nullish(),
    refresh_ttl: z.boolean().nullish(),
  })
  .strict();

export const StoreNamespacesSchema = z
  .object({
    prefix: z.array(Label).nullish(),
    suffix: z.array(Label).nullish(),
    max_depth: z.number().int().min(1).max(100).nullish(),
    limit: Limit(100),
    offset: Offset,
  })
  .strict();

/** An item as the SDK reads it: snake_case times, the rest as the store holds it. */
function wireItem(item: Item & { score?: number }) {
  return {
    namespace: item.namespace,
    key: item.key,
    value: item.value,
    created_at: item.createdAt,
    updated_at: item.updatedAt,
    ...(item.score !== undefined ? { score: item.score } : {}),
  };
}

export class StoreApi {
  constructor(private readonly store: BaseStore) {}

  private of(caller: Caller): TtlCapableStore {
    return scopedStore(this.store, caller.scope);
  }

  async put(req: Request, caller: Caller): Promise<undefined> {
    const body = parsePart(StorePutSchema, req.body, 'body');
    await this.of(caller).put(body.namespace, body.key, body.value, body.index ?? undefined, {
      ttl: body.ttl ?? null,
    });
    return undefined;
  }

  async get(req: Request, caller: Caller) {
    const query = parsePart(StoreGetSchema, req.query, 'query');
    const namespace = query.namespace === '' ? [] : query.namespace.split('.');
    const item = await this.of(caller).get(namespace, query.key, {
      refreshTtl: query.refresh_ttl === 'true',
    });
    return item ? wireItem(item) : null;
  }

  async delete(req: Request, caller: Caller): Promise<undefined> {
    const body = parsePart(StoreDeleteSchema, req.body, 'body');
    await this.of(caller).delete(body.namespace, body.key);
    return undefined;
  }

  async search(req: Request, caller: Caller) {
    const body = parsePart(StoreSearchSchema, req.body, 'body');
    const items = await this.of(caller).search(body.namespace_prefix, {
      ...(body.filter ? { filter: body.filter } : {}),
      limit: body.limit,
      offset: body.offset,
      // With langgraph.json's store.index a query ranks by similarity and answers `score`;
      // without one it ranks nothing (LangGraph's own stores do the same).
      ...(body.query ? { query: body.query } : {}),
      refreshTtl: body.refresh_ttl === true,
    });
    return { items: items.map(wireItem) };
  }

  async namespaces(req: Request, caller: Caller) {
    const body = parsePart(StoreNamespacesSchema, req.body, 'body');
    const namespaces = await this.of(caller).listNamespaces({
      ...(body.prefix ? { prefix: body.prefix } : {}),
      ...(body.suffix ? { suffix: body.suffix } : {}),
      ...(body.max_depth ? { maxDepth: body.max_depth } : {}),
      limit: body.limit,
      offset: body.offset,
    });
    return { namespaces };
  }
}
