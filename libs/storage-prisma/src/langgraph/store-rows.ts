import type { Item } from '@langchain/langgraph-checkpoint';
import type { Prisma } from '../generated/postgres/client';
import { NAMESPACE_SEPARATOR, decodeNamespace } from './namespace';

/** The rows of `store_items` as the store reads them, and the `where`s every read shares. */

export interface StoreRow {
  namespace: string;
  key: string;
  value: string;
  createdAt: Date;
  updatedAt: Date;
  ttlMinutes: number | null;
}

export const ROW_SELECT = {
  namespace: true,
  key: true,
  value: true,
  createdAt: true,
  updatedAt: true,
  ttlMinutes: true,
} as const;

export function live(now: Date): Prisma.StoreItemWhereInput {
  return { OR: [{ expiresAt: null }, { expiresAt: { gt: now } }] };
}

/**
 * Rows whose namespace may lie under `prefix`: a superset (Prisma's `startsWith` is a LIKE that
 * SQLite matches case-insensitively and nobody escapes), refined with `namespaceHasPrefix`.
 */
export function prefixCandidates(prefix: string): {
  OR?: { namespace: string | { startsWith: string } }[];
} {
  if (prefix === '') return {};
  return {
    OR: [{ namespace: prefix }, { namespace: { startsWith: prefix + NAMESPACE_SEPARATOR } }],
  };
}

export function toItem(row: StoreRow): Item {
  return {
    namespace: decodeNamespace(row.namespace),
    key: row.key,
    value: JSON.parse(row.value) as Record<string, unknown>,
    createdAt: row.createdAt,
    updatedAt: row.updatedAt,
  };
}
