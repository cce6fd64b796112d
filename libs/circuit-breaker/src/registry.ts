import { CircuitBreaker } from './circuit-breaker';
import { CircuitBreakerConfigError } from './errors';
import { ListenerSet } from './listeners';
import type { CircuitBreakerOptions } from './options';
import { parseName, parseOptions } from './options';
import type { CircuitBreakerSnapshot, StateChangeListener, Unsubscribe } from './types';

/** Configuration of a `CircuitBreakerRegistry`. */
export interface CircuitBreakerRegistryOptions {
  /**
   * Applied to every breaker the registry creates, field by field under the options given to
   * `get` (which win). Validated when the registry is constructed.
   */
  defaults?: CircuitBreakerOptions;
}

/**
 * Named breakers, one per dependency (e.g. `openai`, `docker`), created on first use and shared
 * by every caller that asks for the same name.
 *
 * Invariants: `get(name)` returns the same instance for the lifetime of the registry; the
 * options of the first `get` for a name are the ones that apply. Registry listeners hear the
 * transitions of every breaker, including breakers created after they subscribed.
 */
export class CircuitBreakerRegistry {
  private readonly breakers = new Map<string, CircuitBreaker>();
  private readonly listeners = new ListenerSet();
  private readonly defaults: CircuitBreakerOptions;

  /** @throws CircuitBreakerConfigError when `defaults` holds an invalid option. */
  constructor(options: CircuitBreakerRegistryOptions = {}) {
    const unknownKeys = Object.keys(options).filter((key) => key !== 'defaults');
    if (unknownKeys.length > 0) {
      throw new CircuitBreakerConfigError(
        `Invalid circuit breaker registry options: unknown field(s) ${unknownKeys.join(', ')}`,
        unknownKeys.map((path) => ({ path, message: 'Unknown field' })),
      );
    }
    this.defaults = parseOptions(options.defaults, 'circuit breaker registry defaults', 'defaults');
  }

  /**
   * The breaker called `name`, created with `{ ...defaults, ...options }` if it does not exist
   * yet. `options` are ignored for an existing breaker, so call sites may pass them on every
   * call; they are still validated, so a bad option fails at every call site, not only the first.
   *
   * @throws CircuitBreakerConfigError for a blank name or an invalid option.
   */
  get(name: string, options?: CircuitBreakerOptions): CircuitBreaker {
    const key = parseName(name);
    const existing = this.breakers.get(key);
    if (existing) {
      if (options !== undefined) parseOptions(options, `options for circuit breaker "${key}"`);
      return existing;
    }
    const breaker = new CircuitBreaker(key, { ...this.defaults, ...options });
    breaker.onStateChange((breakerName, from, to) =>
      this.listeners.notify(breakerName, from, to, breaker.options.onListenerError),
    );
    this.breakers.set(key, breaker);
    return breaker;
  }

  /** Whether a breaker called `name` has been created. */
  has(name: string): boolean {
    return this.breakers.has(name);
  }

  /** Figures of every breaker, in creation order (see `CircuitBreakerSnapshot`). */
  snapshots(): CircuitBreakerSnapshot[] {
    return [...this.breakers.values()].map((breaker) => breaker.snapshot());
  }

  /** Subscribes to the transitions of every breaker of this registry. */
  onStateChange(listener: StateChangeListener): Unsubscribe {
    return this.listeners.add(listener);
  }
}
