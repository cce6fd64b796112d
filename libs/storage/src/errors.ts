import type { ErrorCode } from '@cognition/contracts';
import { CodedError, toFieldIssues } from '@cognition/contracts';
import type { z } from 'zod';

export type StorageErrorCode = Extract<
  ErrorCode,
  | 'VALIDATION_ERROR'
  | 'NOT_FOUND'
  | 'PAYLOAD_TOO_LARGE'
  | 'SESSION_NOT_FOUND'
  | 'MESSAGE_NOT_FOUND'
  | 'RUN_NOT_FOUND'
  | 'VERSION_CONFLICT'
  | 'RUN_IN_PROGRESS'
  | 'CONFLICT'
  | 'STORAGE_ERROR'
  | 'UNAVAILABLE'
>;

/**
 * The one error type every storage backend throws. Database errors never escape a backend
 * untranslated: callers switch on `code`, and the API maps codes to statuses.
 */
export class StorageError extends CodedError<StorageErrorCode> {
  override readonly name = 'StorageError';

  static validation(error: z.ZodError, what: string): StorageError {
    const issues = toFieldIssues(error);
    return new StorageError(
      'VALIDATION_ERROR',
      `Invalid ${what}: ${issues.map((i) => `${i.path}: ${i.message}`).join('; ')}`,
      { issues },
    );
  }

  static sessionNotFound(id: string): StorageError {
    return new StorageError('SESSION_NOT_FOUND', `Session not found: ${id}`);
  }
}

export function isStorageError(error: unknown): error is StorageError {
  return error instanceof StorageError;
}

/** Parses `input` with `schema`, throwing a typed VALIDATION_ERROR rather than a ZodError. */
export function parseInput<S extends z.ZodType>(
  schema: S,
  input: unknown,
  what: string,
): z.output<S> {
  const result = schema.safeParse(input);
  if (!result.success) throw StorageError.validation(result.error, what);
  return result.data;
}
