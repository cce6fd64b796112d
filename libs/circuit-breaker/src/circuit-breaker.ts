import { CircuitOpenError } from './errors';
import { ListenerSet } from './listeners';
import type { CircuitBreakerOptions, ResolvedCircuitBreakerOptions } from './options';
import { parseName, resolveOptions } from './options';
import type {
  CircuitBreakerSnapshot,
  CircuitState,
  ExecuteOptions,
  StateChangeListener,
  Unsubscribe,
} from './types';

type Outcome = 'success' | 'failure' | 'neutral';

/** What `execute` remembers about an admitted call until it settles. */
interface Admission {
  /** The transition count at admission: a call admitted before a later transition is stale. */
  epoch: number;
  state: 'CLOSED' | 'HALF_OPEN';
}

/**
 * A CLOSED / OPEN / HALF_OPEN circuit breaker around calls to one dependency.
 *
 * Invariants:
 * - No timer is ever started: the `OPEN` → `HALF_OPEN` transition is applied lazily, on the next
 *   `execute`, `state` or `snapshot` once `timeoutSeconds` have elapsed since `openedAt`.
 * - In `HALF_OPEN` at most `halfOpenMaxCalls` admitted calls are in flight at once; admission is
 *   decided synchronously when `execute` is called, so concurrent callers cannot overshoot.
 * - Only calls admitted since the latest transition move the state machine. A call that settles
 *   after the circuit changed state still counts in `failedCalls`, but cannot, for instance,
 *   close a circuit that reopened meanwhile or use up a half-open slot it did not take.
 * - Errors of the protected function are always rethrown unchanged; the breaker only throws its
 *   own `CircuitOpenError` when it refuses to call.
 */
export class CircuitBreaker {
  readonly name: string;
  readonly options: Readonly<ResolvedCircuitBreakerOptions>;

  private current: CircuitState = 'CLOSED';
  private epoch = 0;
  private openedAtMs: number | null = null;
  private consecutiveFailures = 0;
  private halfOpenInFlight = 0;
  private halfOpenSuccesses = 0;
  private totalCalls = 0;
  private failedCalls = 0;
  private rejectedCalls = 0;
  private readonly listeners = new ListenerSet();

  /** @throws CircuitBreakerConfigError when `name` is blank or an option is invalid. */
  constructor(name: string, options?: CircuitBreakerOptions) {
    this.name = parseName(name);
    this.options = Object.freeze(
      resolveOptions(options, `options for circuit breaker "${this.name}"`),
    );
  }

  /** The current state, after applying an elapsed open timeout. */
  get state(): CircuitState {
    this.applyOpenTimeout(this.options.clock.now());
    return this.current;
  }

  /**
   * Calls `fn` if the circuit admits the call, otherwise rejects with `CircuitOpenError` without
   * calling it. The outcome of `fn` (see `CircuitBreakerOptions.isFailure` and
   * `ExecuteOptions.signal`) drives the state machine; its result or error is passed through.
   */
  async execute<T>(
    fn: (signal: AbortSignal | undefined) => Promise<T>,
    options: ExecuteOptions = {},
  ): Promise<T> {
    const { signal } = options;
    signal?.throwIfAborted();
    const admission = this.admit();
    let result: T;
    try {
      result = await fn(signal);
    } catch (error) {
      this.settle(admission, this.classify(error, signal));
      throw error;
    }
    this.settle(admission, 'success');
    return result;
  }

  snapshot(): CircuitBreakerSnapshot {
    const state = this.state;
    return {
      name: this.name,
      state,
      totalCalls: this.totalCalls,
      failedCalls: this.failedCalls,
      rejectedCalls: this.rejectedCalls,
      consecutiveFailures: this.consecutiveFailures,
      openedAt: this.openedAtMs === null ? null : new Date(this.openedAtMs),
    };
  }

  /** Subscribes to this breaker's transitions (see `StateChangeListener`). */
  onStateChange(listener: StateChangeListener): Unsubscribe {
    return this.listeners.add(listener);
  }

  private admit(): Admission {
    const now = this.options.clock.now();
    this.applyOpenTimeout(now);
    switch (this.current) {
      case 'CLOSED':
        break;
      case 'OPEN': {
        this.rejectedCalls += 1;
        const retryAtMs = (this.openedAtMs ?? now) + this.timeoutMs;
        throw new CircuitOpenError(this.name, 'OPEN', new Date(retryAtMs), retryAtMs - now);
      }
      case 'HALF_OPEN':
        if (this.halfOpenInFlight >= this.options.halfOpenMaxCalls) {
          this.rejectedCalls += 1;
          throw new CircuitOpenError(this.name, 'HALF_OPEN', new Date(now), 0);
        }
        this.halfOpenInFlight += 1;
        break;
    }
    this.totalCalls += 1;
    return { epoch: this.epoch, state: this.current };
  }

  private classify(error: unknown, signal: AbortSignal | undefined): Outcome {
    if (signal?.aborted) return 'neutral';
    try {
      return this.options.isFailure(error) ? 'failure' : 'success';
    } catch {
      // A broken predicate must not hide an outage: fail safe towards opening.
      return 'failure';
    }
  }

  private settle(admission: Admission, outcome: Outcome): void {
    if (outcome === 'failure') this.failedCalls += 1;
    if (admission.epoch !== this.epoch) return;
    switch (admission.state) {
      case 'CLOSED':
        if (outcome === 'failure') {
          this.consecutiveFailures += 1;
          if (this.consecutiveFailures >= this.options.failureThreshold) this.open();
        } else if (outcome === 'success') {
          this.consecutiveFailures = 0;
        }
        return;
      case 'HALF_OPEN':
        this.halfOpenInFlight -= 1;
        if (outcome === 'failure') {
          this.consecutiveFailures += 1;
          this.open();
        } else if (outcome === 'success') {
          this.consecutiveFailures = 0;
          this.halfOpenSuccesses += 1;
          if (this.halfOpenSuccesses >= this.options.successThreshold) this.transition('CLOSED');
        }
        return;
    }
  }

  private get timeoutMs(): number {
    return this.options.timeoutSeconds * 1000;
  }

  private applyOpenTimeout(now: number): void {
    if (
      this.current === 'OPEN' &&
      this.openedAtMs !== null &&
      now - this.openedAtMs >= this.timeoutMs
    ) {
      this.transition('HALF_OPEN');
    }
  }

  private open(): void {
    this.openedAtMs = this.options.clock.now();
    this.transition('OPEN');
  }

  private transition(to: CircuitState): void {
    const from = this.current;
    this.current = to;
    this.epoch += 1;
    this.halfOpenInFlight = 0;
    this.halfOpenSuccesses = 0;
    if (to === 'CLOSED') {
      this.openedAtMs = null;
      this.consecutiveFailures = 0;
    }
    this.listeners.notify(this.name, from, to, this.options.onListenerError);
  }
}
