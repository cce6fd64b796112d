import type { FieldIssue } from '@cognition/contracts';
import { StorageError, threadNamespaceLabel } from '@cognition/storage';
import type { PrismaDb, PrismaTx } from '../db/db';
import type { Prisma } from '../generated/postgres/client';

/**
 * Separator of the labels of a stored namespace (U+001F, "unit separator"). A label may not
 * contain it, so `encodeNamespace` is injective and `decodeNamespace` its exact inverse.
 */
export const NAMESPACE_SEPARATOR = '\u001f';

/** Throws VALIDATION_ERROR naming `field` unless `value` is a string PostgreSQL can store. */
export function assertStorableString(value: unknown, field: string): asserts value is string {
  if (typeof value !== 'string') {
    throw invalid(field, `must be a string, got ${kindOf(value)}`);
  }
  // PostgreSQL TEXT cannot hold NUL; rejecting it on both providers keeps them identical.
  if (value.includes('\u0000')) throw invalid(field, 'must not contain NUL characters');
}

/**
 * Validates and encodes namespace labels as stored in `store_items.namespace`: the labels joined
 * with {@link NAMESPACE_SEPARATOR}. Every label must be a non-empty string without the separator
 * or NUL; otherwise a VALIDATION_ERROR names the offending label (`namespace[i]`). The empty
 * namespace encodes to `''`, which no non-empty namespace can produce.
 */
export function encodeNamespace(labels: readonly string[], field = 'namespace'): string {
  if (!Array.isArray(labels))
    throw invalid(field, `must be an array of labels, got ${kindOf(labels)}`);
  labels.forEach((label, index) => {
    const labelField = `${field}[${index}]`;
    assertStorableString(label, labelField);
    if (label === '') throw invalid(labelField, 'namespace labels must not be empty');
    if (label.includes(NAMESPACE_SEPARATOR)) {
      throw invalid(labelField, 'namespace labels must not contain U+001F (the label separator)');
    }
  });
  return labels.join(NAMESPACE_SEPARATOR);
}

/** Inverse of {@link encodeNamespace}. */
export function decodeNamespace(encoded: string): string[] {
  return encoded === '' ? [] : encoded.split(NAMESPACE_SEPARATOR);
}

/** True when the encoded namespace has `label` as one of its whole labels (exact, case-sensitive). */
export function namespaceHasLabel(encoded: string, label: string): boolean {
  return decodeNamespace(encoded).includes(label);
}

/** True when the encoded namespace equals the encoded prefix or lies below it (label-wise). */
export function namespaceHasPrefix(encoded: string, encodedPrefix: string): boolean {
  return (
    encodedPrefix === '' ||
    encoded === encodedPrefix ||
    encoded.startsWith(encodedPrefix + NAMESPACE_SEPARATOR)
  );
}

/**
 * A `where` selecting every item that may hold `label`: a superset, because Prisma's `contains`
 * is a LIKE without escapes (on SQLite also case-insensitive), so `_`, `%` or letter case in a
 * label can match other rows. Callers must refine the result with {@link namespaceHasLabel}.
 */
function labelCandidatesWhere(label: string): Prisma.StoreItemWhereInput {
  return { namespace: { contains: label } };
}

/**
 * The exact `where` of every store item whose namespace contains
 * `threadNamespaceLabel(threadId)` as a whole label, wherever in the namespace it sits.
 *
 * It reads the matching namespaces first (one query) because no Prisma filter can express an
 * exact, case-sensitive substring match on both providers (see `labelCandidatesWhere`); a
 * plain `contains` where would also delete items of other threads whose ids differ in case or
 * contain `_`/`%`. Pass the transaction client to keep read and delete in one transaction.
 */
export async function threadItemsWhere(
  client: PrismaTx | PrismaDb,
  threadId: string,
): Promise<Prisma.StoreItemWhereInput> {
  return { namespace: { in: await threadNamespaces(client, threadId) } };
}

/**
 * Deletes every store item of the thread (see {@link threadItemsWhere}); returns how many.
 * Meant to run inside the session-delete transaction.
 */
export async function deleteThreadItems(
  client: PrismaTx | PrismaDb,
  threadId: string,
): Promise<number> {
  const namespaces = await threadNamespaces(client, threadId);
  if (namespaces.length === 0) return 0;
  const { count } = await client.storeItem.deleteMany({ where: { namespace: { in: namespaces } } });
  return count;
}

async function threadNamespaces(client: PrismaTx | PrismaDb, threadId: string): Promise<string[]> {
  assertStorableString(threadId, 'threadId');
  const label = threadNamespaceLabel(threadId);
  const candidates = await client.storeItem.findMany({
    where: labelCandidatesWhere(label),
    select: { namespace: true },
    distinct: ['namespace'],
  });
  return candidates
    .map((row) => row.namespace)
    .filter((namespace) => namespaceHasLabel(namespace, label));
}

function invalid(field: string, message: string): StorageError {
  const issues: FieldIssue[] = [{ path: field, message }];
  return new StorageError('VALIDATION_ERROR', `Invalid ${field}: ${message}`, { issues });
}

function kindOf(value: unknown): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'array';
  return typeof value;
}
