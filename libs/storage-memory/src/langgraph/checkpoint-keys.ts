import type { FieldIssue } from '@cognition/contracts';
import { ROOT_CHECKPOINT_NS, StorageError } from '@cognition/storage';

// The keys MemorySaver stores checkpoints under, checked the way it checks them.

export function latestId(checkpoints: Record<string, unknown>): string | null {
  let latest: string | null = null;
  for (const id of Object.keys(checkpoints)) if (latest === null || id > latest) latest = id;
  return latest;
}

/** Keys that would reach `Object.prototype` through bracket access, as MemorySaver refuses them. */
const RESERVED_KEYS = new Set(['__proto__', 'constructor', 'prototype']);

/** A config value used as a storage key: a non-empty string that is not a reserved key. */
export function storageKey(value: unknown, field: string): string {
  if (typeof value !== 'string' || value === '') throw invalid(field, 'must be a non-empty string');
  if (RESERVED_KEYS.has(value)) throw invalid(field, `must not be "${value}"`);
  return value;
}

/** `configurable.checkpoint_ns`: the root namespace when absent; may be empty. */
export function namespaceKey(value: unknown): string {
  if (value === undefined || value === null || value === ROOT_CHECKPOINT_NS)
    return ROOT_CHECKPOINT_NS;
  return storageKey(value, 'configurable.checkpoint_ns');
}

function invalid(field: string, message: string): StorageError {
  const issues: FieldIssue[] = [{ path: field, message }];
  return new StorageError('VALIDATION_ERROR', `Invalid ${field}: ${message}`, { issues });
}
