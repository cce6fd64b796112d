/**
 * The three states of a breaker.
 *
 * - `CLOSED`: calls pass through; consecutive failures are counted.
 * - `OPEN`: calls fail fast with a `CircuitOpenError` until the open timeout has elapsed.
 * - `HALF_OPEN`: a limited number of concurrent trial calls probe the dependency; enough
 *   successes close the circuit, any failure reopens it.
 */
export type CircuitState = 'CLOSED' | 'OPEN' | 'HALF_OPEN';

/** Source of the current time in epoch milliseconds. Inject a fake one in tests. */
export interface Clock {
  now(): number;
}

/**
 * Called synchronously after every state transition, once the breaker's state is consistent
 * (a listener may call `snapshot()` or `execute()`). A throwing listener never fails the call
 * that caused the transition, nor stops the other listeners.
 */
export type StateChangeListener = (name: string, from: CircuitState, to: CircuitState) => void;

/** Removes the listener it was returned for; calling it twice is harmless. */
export type Unsubscribe = () => void;

/** Per-call options of `CircuitBreaker.execute`. */
export interface ExecuteOptions {
  /**
   * Passed to the protected function. A call that rejects after this signal aborted is the
   * caller giving up, which says nothing about the dependency: it counts neither as a failure
   * nor as a success. An already aborted signal rejects with its reason without calling.
   */
  signal?: AbortSignal;
}

/** Point-in-time figures of one breaker, e.g. for `/health`. */
export interface CircuitBreakerSnapshot {
  name: string;
  /** The state as of the snapshot; an elapsed open timeout is applied first. */
  state: CircuitState;
  /** Calls admitted and handed to the protected function (in flight or settled). */
  totalCalls: number;
  /** Admitted calls that settled with an error `isFailure` classified as a failure. */
  failedCalls: number;
  /** Calls rejected fast with `CircuitOpenError` (never handed to the protected function). */
  rejectedCalls: number;
  /**
   * The failure streak the state machine counts: reset by a success and by closing. Calls
   * admitted before the latest transition do not move it, so it can be lower than the number
   * of failures that happened concurrently.
   */
  consecutiveFailures: number;
  /** When the circuit last opened; `null` while `CLOSED`. Kept while `HALF_OPEN`. */
  openedAt: Date | null;
}
