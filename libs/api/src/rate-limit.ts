import type { Caller } from './auth';
import { ApiError } from './errors';

/** What is counted: every API call, or the calls that start a run (`messages.send`). */
export type RateBucket = 'requests' | 'runs';

export interface RateDecision {
  allowed: boolean;
  /** When refused: seconds until the window resets (the `Retry-After` value). */
  retryAfterSeconds: number;
}

/**
 * Per-tenant budgets per minute (`COGNITION_RATE_LIMIT_*`), counted in fixed one-minute windows:
 * in process on one node (`FixedWindowRateLimiter`), shared through Redis with several nodes
 * (`RedisRateLimiter` of @cognition/cluster-redis, same shape). A bucket without a limit is
 * never counted.
 */
export interface RateLimiter {
  take(bucket: RateBucket, tenant: string): Promise<RateDecision>;
}

export interface RateLimits {
  requests: number | null;
  runs: number | null;
}

export const RATE_WINDOW_MS = 60_000;

/** The in-process limiter: one counter per bucket, tenant and minute. */
export class FixedWindowRateLimiter implements RateLimiter {
  private readonly counts = new Map<string, { window: number; count: number }>();

  constructor(
    private readonly limits: RateLimits,
    private readonly now: () => number = Date.now,
  ) {}

  take(bucket: RateBucket, tenant: string): Promise<RateDecision> {
    const limit = this.limits[bucket];
    if (limit === null) return Promise.resolve({ allowed: true, retryAfterSeconds: 0 });
    const now = this.now();
    const window = Math.floor(now / RATE_WINDOW_MS);
    const key = `${bucket}\u0000${tenant}`;
    const entry = this.counts.get(key);
    const count = entry && entry.window === window ? entry.count + 1 : 1;
    this.counts.set(key, { window, count });
    if (this.counts.size > 100_000) this.forgetOldWindows(window);
    return Promise.resolve({
      allowed: count <= limit,
      retryAfterSeconds: Math.max(1, Math.ceil(((window + 1) * RATE_WINDOW_MS - now) / 1000)),
    });
  }

  private forgetOldWindows(current: number): void {
    for (const [key, entry] of this.counts) if (entry.window !== current) this.counts.delete(key);
  }
}

/** Refused by a rate limit: 429 `RATE_LIMITED` with `Retry-After`. */
export class RateLimitedError extends ApiError {
  constructor(
    bucket: RateBucket,
    readonly retryAfterSeconds: number,
  ) {
    super(
      'RATE_LIMITED',
      bucket === 'runs'
        ? `Too many runs started by this tenant this minute: retry after ${retryAfterSeconds} s`
        : `Too many requests from this tenant this minute: retry after ${retryAfterSeconds} s`,
    );
  }
}

/**
 * Whose budget a call counts against: the caller's scope (one tenant per scope value set), else
 * its API key, else the one budget of an open server.
 */
export function tenantOf(caller: Caller): string {
  const entries = Object.entries(caller.scope).sort(([a], [b]) => a.localeCompare(b));
  if (entries.length > 0) return `scope:${JSON.stringify(entries)}`;
  if (caller.apiKeyId !== undefined) return `key:${caller.apiKeyId}`;
  return 'open';
}

/** The `Retry-After` seconds of a rate-limit refusal anywhere in an error's cause chain. */
export function retryAfterOf(error: unknown): number | undefined {
  for (let current = error, depth = 0; current && depth < 5; depth += 1) {
    if (current instanceof RateLimitedError) return current.retryAfterSeconds;
    current = (current as { cause?: unknown }).cause;
  }
  return undefined;
}
