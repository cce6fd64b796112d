import type { CircuitBreaker } from '@cognition/circuit-breaker';
import { CircuitOpenError } from '@cognition/circuit-breaker';
import { Redis } from 'ioredis';

/** Thrown (code `UNAVAILABLE`, HTTP 503) for work that needs Redis while it is unreachable. */
export class RedisUnavailableError extends Error {
  readonly code = 'UNAVAILABLE' as const;
  constructor(what: string, cause: unknown) {
    super(
      `Redis is unavailable (${what}): ${cause instanceof Error ? cause.message : String(cause)}`,
      { cause },
    );
    this.name = 'RedisUnavailableError';
  }
}

/**
 * A Redis client for commands that must not wait for a lost connection: commands fail at once
 * while disconnected (no offline queue) and the client reconnects by itself, backing off up to
 * two seconds. Blocking reads and subscriptions get their own client (`duplicate`).
 */
export function openRedis(url: string): Redis {
  return new Redis(url, {
    lazyConnect: true,
    enableOfflineQueue: false,
    maxRetriesPerRequest: 1,
    retryStrategy: (attempt) => Math.min(attempt * 100, 2000),
    enableAutoPipelining: true,
  });
}

/** Runs a Redis command under the breaker; failures become `RedisUnavailableError`. */
export async function guarded<T>(
  breaker: CircuitBreaker,
  what: string,
  fn: () => Promise<T>,
): Promise<T> {
  try {
    return await breaker.execute(() => fn());
  } catch (error) {
    if (error instanceof CircuitOpenError) throw new RedisUnavailableError(what, error);
    throw new RedisUnavailableError(what, error);
  }
}
