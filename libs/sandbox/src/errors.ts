import type { ErrorCode } from '@cognition/contracts';

/**
 * Why a sandbox operation was refused or failed. The message of a `SandboxError` is written for
 * the model (it is returned to it as the tool error), so it names the offending path or argument.
 */
export type SandboxErrorCode =
  /** The path resolves (symlinks included) outside the session root. */
  | 'PATH_VIOLATION'
  /** The path is, or contains, a protected path (default `.cognition/`): no write/edit/delete. */
  | 'PROTECTED_PATH'
  | 'NOT_FOUND'
  | 'NOT_A_DIRECTORY'
  | 'IS_A_DIRECTORY'
  /** `edit`: the old text occurs 0 times. */
  | 'EDIT_NO_MATCH'
  /** `edit`: the old text occurs more than once. */
  | 'EDIT_AMBIGUOUS'
  /** An argument other than a path or command is invalid (the message names it). */
  | 'INVALID_ARGUMENT'
  /** The command is empty or cannot be parsed. */
  | 'INVALID_COMMAND'
  /** The Docker engine cannot be reached (the message names the socket / host tried). */
  | 'DOCKER_UNAVAILABLE'
  /** The sandbox image does not exist on the engine. */
  | 'IMAGE_NOT_FOUND'
  /** The Docker engine answered with an error. */
  | 'DOCKER_ERROR'
  /** The circuit breaker around the Docker API is open; the engine is not called. */
  | 'CIRCUIT_OPEN'
  /** The caller's signal was already aborted. */
  | 'ABORTED'
  /** The backend was terminated; create a new one with `forSession`. */
  | 'TERMINATED';

const API_CODES: Record<SandboxErrorCode, ErrorCode> = {
  PATH_VIOLATION: 'PATH_VIOLATION',
  PROTECTED_PATH: 'FORBIDDEN',
  NOT_FOUND: 'NOT_FOUND',
  NOT_A_DIRECTORY: 'VALIDATION_ERROR',
  IS_A_DIRECTORY: 'VALIDATION_ERROR',
  EDIT_NO_MATCH: 'VALIDATION_ERROR',
  EDIT_AMBIGUOUS: 'VALIDATION_ERROR',
  INVALID_ARGUMENT: 'VALIDATION_ERROR',
  INVALID_COMMAND: 'VALIDATION_ERROR',
  DOCKER_UNAVAILABLE: 'UNAVAILABLE',
  IMAGE_NOT_FOUND: 'UNAVAILABLE',
  DOCKER_ERROR: 'SANDBOX_ERROR',
  CIRCUIT_OPEN: 'CIRCUIT_OPEN',
  ABORTED: 'ABORTED',
  TERMINATED: 'SANDBOX_ERROR',
};

/**
 * The one error type of this library. `code` is the sandbox-specific reason; `errorCode` is the
 * shared contracts code the API layer maps to a tRPC code / HTTP status.
 */
export class SandboxError extends Error {
  override readonly name = 'SandboxError';
  readonly errorCode: ErrorCode;

  constructor(
    readonly code: SandboxErrorCode,
    message: string,
    options?: { cause?: unknown },
  ) {
    super(message, options);
    this.errorCode = API_CODES[code];
  }
}
