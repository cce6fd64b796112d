import type { FieldIssue } from '@cognition/contracts';
import { StorageError } from '@cognition/storage';
import { WRITES_IDX_MAP } from '@langchain/langgraph-checkpoint';
import { assertStorableString } from './namespace';

// The checkpointer's checks of what LangGraph passes in, and their errors.

/**
 * The reserved index of a special channel (error, interrupt, ...), else undefined. An own-property
 * check, so a channel named like an Object.prototype member is an ordinary channel.
 */
export function specialIndex(channel: string): number | undefined {
  return Object.hasOwn(WRITES_IDX_MAP, channel) ? WRITES_IDX_MAP[channel] : undefined;
}

export function optionalString(value: unknown, field: string): string | undefined {
  if (value === undefined || value === null) return undefined;
  assertStorableString(value, field);
  return value;
}

/** Equality of JSON-like values: primitives by identity, arrays and objects structurally. */
export function jsonEqual(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  if (typeof a !== 'object' || typeof b !== 'object' || a === null || b === null) return false;
  if (Array.isArray(a) !== Array.isArray(b)) return false;
  const aKeys = Object.keys(a);
  const bKeys = Object.keys(b);
  if (aKeys.length !== bKeys.length) return false;
  return aKeys.every((key) =>
    jsonEqual((a as Record<string, unknown>)[key], (b as Record<string, unknown>)[key]),
  );
}

export function invalid(field: string, message: string): StorageError {
  const issues: FieldIssue[] = [{ path: field, message }];
  return new StorageError('VALIDATION_ERROR', `Invalid ${field}: ${message}`, { issues });
}
