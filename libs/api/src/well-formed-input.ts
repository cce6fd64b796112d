import type { FieldIssue } from '@cognition/contracts';
import { ApiError } from './errors';

/** A UTF-16 surrogate without its partner: JSON can carry it (`"\ud800"`), UTF-8 cannot. */
const LONE_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;
/** PostgreSQL's text types cannot hold U+0000 (SQLite can: the backends would disagree). */
const NUL = '\u0000';

/** Why `text` cannot be stored, or undefined when it can. */
function unstorable(text: string): string | undefined {
  if (text.includes(NUL)) return 'must not contain NUL characters (U+0000)';
  if (LONE_SURROGATE.test(text))
    return 'must be well-formed Unicode (it contains an unpaired surrogate)';
  return undefined;
}

/** Deep enough for every real input; deeper nesting is the schemas' business to refuse. */
const MAX_DEPTH = 64;

type Found = { path: string[]; message: string };

/**
 * What superjson's `meta` can turn a JSON value into that no procedure takes, named for the
 * message; undefined for JSON data and for valid Dates below the root (date filters take them).
 * zod's object schemas accept any non-array object: a Date, Map or class instance passes
 * `z.object({...}).strict()` as an object with none of its fields, so `sessions.watch` asked for
 * one session (`{"json":{"sessionId":…},"meta":{"values":["Date"]}}`) watched every session in
 * scope instead of answering 422.
 */
function notJsonData(value: unknown, atRoot: boolean): string | undefined {
  if (typeof value === 'bigint') return 'must be JSON data, not a BigInt (superjson meta)';
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return undefined;
  if (value instanceof Date) {
    if (atRoot) return 'must be an object, not a Date (superjson meta)';
    return Number.isNaN(value.getTime()) ? 'must be a valid date' : undefined;
  }
  const proto: unknown = Object.getPrototypeOf(value);
  if (proto === Object.prototype || proto === null) return undefined;
  const kind = (value as { constructor?: { name?: string } }).constructor?.name || 'object';
  return `must be JSON data, not a ${kind} (superjson meta)`;
}

function findIllFormed(value: unknown, path: string[], depth: number): Found | undefined {
  if (typeof value === 'string') {
    const message = unstorable(value);
    return message ? { path, message } : undefined;
  }
  const refused = notJsonData(value, path.length === 0);
  if (refused) return { path, message: refused };
  if (typeof value !== 'object' || value === null || depth > MAX_DEPTH) return undefined;
  if (Array.isArray(value)) {
    for (let i = 0; i < value.length; i += 1) {
      const found = findIllFormed(value[i], [...path, String(i)], depth + 1);
      if (found) return found;
    }
    return undefined;
  }
  for (const [key, item] of Object.entries(value)) {
    const message = unstorable(key);
    if (message) return { path: [...path, key], message };
    const found = findIllFormed(item, [...path, key], depth + 1);
    if (found) return found;
  }
  return undefined;
}

/**
 * Refuses an input that is not JSON data (see notJsonData) or holds a string (value or key)
 * that cannot be stored: an unpaired
 * surrogate (the Prisma engine fails to encode it: "unexpected end of hex escape", a 500) or
 * a NUL character (PostgreSQL refuses it: a 500 there, stored on SQLite). Such strings pass
 * every zod schema, and used as ids, filters or metadata keys they reached the database.
 * @throws ApiError VALIDATION_ERROR naming the field.
 */
export function assertWellFormedInput(input: unknown): void {
  const found = findIllFormed(input, [], 0);
  if (!found) return;
  const issue: FieldIssue = { path: found.path.join('.') || '(root)', message: found.message };
  throw new ApiError('VALIDATION_ERROR', `Invalid input: ${issue.path}: ${issue.message}`, {
    issues: [issue],
  });
}
