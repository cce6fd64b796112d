import type { ItemVector } from '@cognition/storage';
import { decodeVector, encodeVector, rankByVectors, storeFilterMatches } from '@cognition/storage';
import type { SearchOperation } from '@langchain/langgraph-checkpoint';
import type { PrismaDb } from '../db/db';
import { guard } from '../db/errors';
import { requireRawConnection } from '../db/raw-connections';
import type { RawSelect } from '../db/raw-select';
import { rawSelect } from '../db/raw-select';
import type { Prisma } from '../generated/postgres/client';
import { NAMESPACE_SEPARATOR, namespaceHasPrefix } from './namespace';
import type { StoreRow } from './store-rows';
import { ROW_SELECT, live } from './store-rows';

/**
 * The semantic index's part of `PrismaStore` (`store_vectors`): the statements that replace an
 * item's vectors, and the search that ranks by them. The scan is exact and in the process: the
 * vectors under the prefix are read (no values), scored by cosine similarity, and the items are
 * then fetched best first, in chunks, until `offset + limit` of them are live and pass the
 * filter. pgvector is not used: see docs/langgraph-api.md, "Semantic search".
 */

/** Ranked items fetched per query while the filter and expiry are applied. */
const ITEM_CHUNK = 256;

/**
 * The vectors whose namespace may lie under a prefix (the prefix,
 * '' for all, twice; the prefix and the separator's length in characters, and that text), refined with `namespaceHasPrefix`.
 * On the driver: through Prisma, every blob crosses its query interpreter as base64, which made
 * a scan of 10,000 vectors of 1536 dimensions take over 10 s on SQLite.
 */
const VECTORS_UNDER: RawSelect = {
  name: 'store_vectors_under',
  sqlite:
    "SELECT namespace, key, vector FROM store_vectors WHERE ? = '' OR namespace = ? OR substr(namespace, 1, ?) = ?",
  postgres:
    "SELECT namespace, key, vector FROM store_vectors WHERE $1 = '' OR namespace = $2 OR left(namespace, $3::int) = $4",
};

/** Replaces the vectors of one item (with the item's upsert, in its transaction). */
export function replaceVectors(
  db: PrismaDb,
  id: { namespace: string; key: string },
  vectors: readonly ItemVector[],
): Prisma.PrismaPromise<unknown>[] {
  const queries: Prisma.PrismaPromise<unknown>[] = [db.storeVector.deleteMany({ where: id })];
  if (vectors.length > 0) {
    queries.push(
      db.storeVector.createMany({
        data: vectors.map(({ field, vector }) => ({ ...id, field, vector: encodeVector(vector) })),
      }),
    );
  }
  return queries;
}

const idOf = (namespace: string, key: string): string => JSON.stringify([namespace, key]);

/**
 * The page (`offset`, `limit`) of live items under `prefix` that pass the filter, ranked by the
 * best cosine similarity of their vectors to `query`; items without vectors are not found.
 */
export async function searchByVector(
  db: PrismaDb,
  operation: SearchOperation,
  prefix: string,
  query: Float32Array,
  now: Date,
): Promise<{ row: StoreRow; score: number }[]> {
  const offset = operation.offset ?? 0;
  const limit = operation.limit ?? 10;
  if (limit <= 0) return [];
  const under = prefix + NAMESPACE_SEPARATOR;
  const vectors = await guard('Cannot search store vectors', () =>
    rawSelect<{ namespace: string; key: string; vector: Uint8Array }>(
      requireRawConnection(db, 'The store index'),
      VECTORS_UNDER,
      [prefix, prefix, [...under].length, under],
    ),
  );
  const ranked = rankByVectors(
    query,
    vectors
      .filter((v) => namespaceHasPrefix(v.namespace, prefix))
      .map((v) => ({ id: idOf(v.namespace, v.key), vector: decodeVector(v.vector) })),
  );
  const matched: { row: StoreRow; score: number }[] = [];
  for (let start = 0; start < ranked.length; start += ITEM_CHUNK) {
    const chunk = ranked.slice(start, start + ITEM_CHUNK);
    const keys = chunk.map(({ id }) => {
      const [namespace, key] = JSON.parse(id) as [string, string];
      return { namespace, key };
    });
    const rows = await guard('Cannot search store items', () =>
      db.storeItem.findMany({ where: { AND: [live(now), { OR: keys }] }, select: ROW_SELECT }),
    );
    const byId = new Map(rows.map((row) => [idOf(row.namespace, row.key), row]));
    for (const { id, score } of chunk) {
      const row = byId.get(id);
      if (!row) continue;
      if (!storeFilterMatches(JSON.parse(row.value) as Record<string, unknown>, operation.filter)) {
        continue;
      }
      matched.push({ row, score });
      if (matched.length >= offset + limit) return matched.slice(offset);
    }
  }
  return matched.slice(offset);
}
