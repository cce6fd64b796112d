import type { Logger } from '@cognition/runtime';
import type { Redis } from 'ioredis';

export type RateBucket = 'requests' | 'runs';
export interface RateLimits {
  requests: number | null;
  runs: number | null;
}

const WINDOW_MS = 60_000;

/**
 * The per-tenant budgets shared by every node: one Redis counter per bucket, tenant and minute
 * (`INCR`, expiring with its window), so a tenant's calls count the same whichever node takes
 * them. The same shape as the API's in-process `FixedWindowRateLimiter`. Should Redis fail, the
 * call is let through (and logged): a limiter outage must not take the API down with it.
 */
export class RedisRateLimiter {
  constructor(
    private readonly redis: Redis,
    private readonly keyPrefix: string,
    private readonly limits: RateLimits,
    private readonly logger: Logger,
  ) {}

  async take(
    bucket: RateBucket,
    tenant: string,
  ): Promise<{ allowed: boolean; retryAfterSeconds: number }> {
    const limit = this.limits[bucket];
    if (limit === null) return { allowed: true, retryAfterSeconds: 0 };
    const now = Date.now();
    const window = Math.floor(now / WINDOW_MS);
    const retryAfterSeconds = Math.max(1, Math.ceil(((window + 1) * WINDOW_MS - now) / 1000));
    const key = `${this.keyPrefix}rate:${bucket}:${window}:${tenant}`;
    try {
      const results = await this.redis
        .multi()
        .incr(key)
        .pexpire(key, WINDOW_MS * 2)
        .exec();
      const count = Number(results?.[0]?.[1] ?? 0);
      return { allowed: count <= limit, retryAfterSeconds };
    } catch (error) {
      this.logger.warn(
        { err: error, bucket },
        'rate limiter unavailable: letting the call through',
      );
      return { allowed: true, retryAfterSeconds: 0 };
    }
  }
}
