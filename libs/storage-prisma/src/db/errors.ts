import { StorageError } from '@cognition/storage';
// The runtime both generated clients share (importing a generated client would load it whole).
import { PrismaClientKnownRequestError } from '@prisma/client/runtime/client';

/** Prisma's error codes this backend tells apart. */
const UNIQUE_VIOLATION = 'P2002';
const FOREIGN_KEY_VIOLATION = 'P2003';
const RECORD_NOT_FOUND = 'P2025';
/** Connection-level trouble: unreachable, timed out, closed, pool exhausted, busy. */
const UNAVAILABLE_CODES = new Set(['P1001', 'P1002', 'P1008', 'P1017', 'P2024', 'P2028']);

interface KnownError {
  code: string;
  meta?: Record<string, unknown>;
  message: string;
}

/**
 * Both generated clients throw their own (structurally identical) error classes, so errors are
 * recognised by shape rather than by `instanceof` against one client's classes.
 */
function asKnownError(error: unknown): KnownError | null {
  if (error instanceof PrismaClientKnownRequestError) return error;
  if (
    error instanceof Error &&
    error.name === 'PrismaClientKnownRequestError' &&
    typeof (error as { code?: unknown }).code === 'string'
  ) {
    return error as unknown as KnownError;
  }
  return null;
}

/** True for a unique-constraint violation. */
export function isUniqueViolation(error: unknown): boolean {
  return asKnownError(error)?.code === UNIQUE_VIOLATION;
}

/**
 * The columns of the violated unique constraint (database column names), as reported by the
 * driver adapter; empty when unknown.
 */
export function uniqueViolationFields(error: unknown): string[] {
  if (isRawUniqueViolation(error)) return rawUniqueFields(error as RawDriverError);
  const known = asKnownError(error);
  if (known?.code !== UNIQUE_VIOLATION) return [];
  const cause = (
    known.meta?.['driverAdapterError'] as
      { cause?: { constraint?: { fields?: unknown } } } | undefined
  )?.cause;
  const fields = cause?.constraint?.fields;
  if (Array.isArray(fields)) return fields.map(String);
  const target = known.meta?.['target'];
  return Array.isArray(target) ? target.map(String) : [];
}

export function isForeignKeyViolation(error: unknown): boolean {
  const code = (error as { code?: unknown } | null)?.code;
  // Also raised by the drivers directly (the run writes of run-writes.ts).
  if (code === '23503' || code === 'SQLITE_CONSTRAINT_FOREIGNKEY') return true;
  return asKnownError(error)?.code === FOREIGN_KEY_VIOLATION;
}

interface RawDriverError {
  message?: unknown;
  /** node-postgres: `Key (a, b)=(…) already exists.` */
  detail?: unknown;
}

/**
 * The columns of a unique violation raised by a driver: better-sqlite3 names them in its
 * message (`UNIQUE constraint failed: runs.session_id, runs.idempotency_key`), node-postgres
 * in the error's detail (`Key (session_id, idempotency_key)=(…) already exists.`).
 */
function rawUniqueFields(error: RawDriverError): string[] {
  const detail = typeof error.detail === 'string' ? /^Key \(([^)]*)\)=/.exec(error.detail) : null;
  const listed =
    detail?.[1] ??
    (typeof error.message === 'string'
      ? /constraint failed: (.*)$/.exec(error.message)?.[1]
      : undefined);
  if (!listed) return [];
  return listed.split(',').map((field) => {
    const name = field.trim().replace(/"/g, '');
    return name.slice(name.lastIndexOf('.') + 1);
  });
}

export function isRecordNotFound(error: unknown): boolean {
  return asKnownError(error)?.code === RECORD_NOT_FOUND;
}

/**
 * Translates anything a Prisma call can throw into a StorageError: StorageErrors pass through,
 * unique violations become CONFLICT, connection problems UNAVAILABLE, everything else
 * STORAGE_ERROR. The original error stays on `details.cause`.
 */
export function toStorageError(error: unknown, what: string): StorageError {
  if (error instanceof StorageError) return error;
  const known = asKnownError(error);
  const reason = known
    ? `${known.code}: ${lastLine(known.message)}`
    : error instanceof Error
      ? lastLine(error.message)
      : String(error);
  if (known?.code === UNIQUE_VIOLATION) {
    const fields = uniqueViolationFields(error);
    return new StorageError(
      'CONFLICT',
      `${what}: already exists${fields.length ? ` (${fields.join(', ')})` : ''}`,
      {
        cause: error,
      },
    );
  }
  if (isRawUniqueViolation(error)) {
    return new StorageError('CONFLICT', `${what}: already exists (${reason})`, { cause: error });
  }
  if (
    (known && UNAVAILABLE_CODES.has(known.code)) ||
    (error instanceof Error && error.name === 'PrismaClientInitializationError') ||
    isConnectionError(error)
  ) {
    return new StorageError('UNAVAILABLE', `${what}: database unavailable (${reason})`, {
      cause: error,
    });
  }
  return new StorageError('STORAGE_ERROR', `${what}: ${reason}`, { cause: error });
}

/**
 * A unique or primary-key violation raised by a driver directly (the checkpointer and the
 * projection run raw statements on better-sqlite3 and node-postgres, not through Prisma).
 */
export function isRawUniqueViolation(error: unknown): boolean {
  const code = (error as { code?: unknown } | null)?.code;
  return (
    code === '23505' ||
    code === 'SQLITE_CONSTRAINT_PRIMARYKEY' ||
    code === 'SQLITE_CONSTRAINT_UNIQUE'
  );
}

function isConnectionError(error: unknown): boolean {
  // pg-pool's wait for a free client timed out (`connectionTimeoutMillis`), pg's socket closed
  // under a query (the server stopped), or a query on a client whose connection had already
  // dropped (held by a transaction when the server stopped): none has a code.
  if (
    error instanceof Error &&
    (error.message === 'timeout exceeded when trying to connect' ||
      error.message.includes('Connection terminated unexpectedly') ||
      error.message.includes('is not queryable'))
  ) {
    return true;
  }
  const code = (error as { code?: unknown } | null)?.code;
  return (
    typeof code === 'string' &&
    ([
      'ECONNREFUSED',
      'ECONNRESET',
      'ETIMEDOUT',
      'ENOTFOUND',
      'EPIPE',
      'SQLITE_BUSY',
      // admin shutdown, crash shutdown, the server starting up or shutting down
      '57P01',
      '57P02',
      '57P03',
      '53300',
    ].includes(code) ||
      // SQLSTATE class 08: connection exceptions
      /^08[0-9A-Z]{3}$/.test(code))
  );
}

/** Prisma prefixes messages with a code frame; the last line carries the reason. */
function lastLine(message: string): string {
  const lines = message.trim().split('\n');
  return (lines[lines.length - 1] ?? message).trim();
}

/** Runs `fn`, translating any error (see {@link toStorageError}). */
export async function guard<T>(what: string, fn: () => Promise<T>): Promise<T> {
  try {
    return await fn();
  } catch (error) {
    throw toStorageError(error, what);
  }
}
