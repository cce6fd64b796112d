import type { ErrorCode, FieldIssue } from '@cognition/contracts';
import type { CircuitState } from './types';

/**
 * Thrown by `CircuitBreaker.execute` instead of calling the protected function, while the
 * circuit is `OPEN` or while `HALF_OPEN` has all its trial slots taken.
 *
 * Invariants: `retryAt` is never before the time of rejection and
 * `retryAfterMs === retryAt.getTime() - <time of rejection>` (so `>= 0`). For `OPEN` it is the
 * moment the breaker will admit trial calls again; for `HALF_OPEN` it is the rejection time
 * itself (`retryAfterMs === 0`), because a slot frees whenever an in-flight trial settles and no
 * later time can be promised.
 */
export class CircuitOpenError extends Error {
  override readonly name = 'CircuitOpenError';
  readonly code: Extract<ErrorCode, 'CIRCUIT_OPEN'> = 'CIRCUIT_OPEN';

  constructor(
    /** The name of the breaker that rejected the call. */
    readonly breakerName: string,
    /** The state that caused the rejection. */
    readonly state: Exclude<CircuitState, 'CLOSED'>,
    readonly retryAt: Date,
    readonly retryAfterMs: number,
  ) {
    super(
      state === 'OPEN'
        ? `Circuit "${breakerName}" is open; retry after ${retryAt.toISOString()}`
        : `Circuit "${breakerName}" is half-open and all trial calls are in flight; retry shortly`,
    );
  }
}

export function isCircuitOpenError(error: unknown): error is CircuitOpenError {
  return error instanceof CircuitOpenError;
}

/**
 * Thrown when constructing a breaker (or a registry) with invalid options. `issues` names
 * every offending field, not only the first.
 */
export class CircuitBreakerConfigError extends Error {
  override readonly name = 'CircuitBreakerConfigError';
  readonly code: Extract<ErrorCode, 'VALIDATION_ERROR'> = 'VALIDATION_ERROR';

  constructor(
    message: string,
    readonly issues: FieldIssue[],
  ) {
    super(message);
  }
}
