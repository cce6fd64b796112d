import type { ErrorCode, FieldIssue } from '@cognition/contracts';
import { CodedError } from '@cognition/contracts';

export type RuntimeErrorCode = Extract<
  ErrorCode,
  | 'VALIDATION_ERROR'
  | 'SESSION_NOT_FOUND'
  | 'NOT_FOUND'
  | 'MESSAGE_NOT_FOUND'
  | 'VERSION_CONFLICT'
  | 'RUN_NOT_FOUND'
  | 'CONFLICT'
  | 'RUN_IN_PROGRESS'
  | 'PROVIDER_CONFIG_ERROR'
  | 'PROVIDER_ERROR'
  | 'CONTEXT_OVERFLOW'
  | 'CIRCUIT_OPEN'
  | 'ABORTED'
  | 'TIMEOUT'
  | 'UNAVAILABLE'
  | 'STORAGE_ERROR'
  | 'INTERNAL_ERROR'
>;

/**
 * The typed error of the runtime. `issues` names the offending fields of a rejected input
 * (`config.model`, `agentName`, `providers[0].apiKey`, ...), so the API can answer 422 with them.
 * Storage errors (e.g. RUN_IN_PROGRESS) pass through the runtime unchanged.
 */
export class RuntimeError extends CodedError<RuntimeErrorCode> {
  override readonly name = 'RuntimeError';

  get issues(): FieldIssue[] {
    return this.details.issues ?? [];
  }

  /** A VALIDATION_ERROR about one field. */
  static field(path: string, message: string): RuntimeError {
    return new RuntimeError('VALIDATION_ERROR', `${path}: ${message}`, {
      issues: [{ path, message }],
    });
  }
}

export function isRuntimeError(error: unknown): error is RuntimeError {
  return error instanceof RuntimeError;
}

/** Best-effort human-readable text of anything thrown. */
export function errorMessage(error: unknown): string {
  if (error instanceof Error) return error.message;
  if (typeof error === 'string') return error;
  try {
    return JSON.stringify(error);
  } catch {
    return String(error);
  }
}
