import type { CircuitBreakerRegistry } from '@cognition/circuit-breaker';
import type { EventLog, Logger } from '@cognition/runtime';
import type { Redis } from 'ioredis';
import { guarded, openRedis } from './redis-connection';
import { RedisEventLog } from './redis-event-log';
import type { RateLimits } from './redis-rate-limiter';
import { RedisRateLimiter } from './redis-rate-limiter';
import { RedisRunControl } from './redis-run-control';

export interface RedisClusterOptions {
  url: string;
  nodeId: string;
  /** Default `cognition:`. */
  keyPrefix?: string;
  /** The durable log every node shares; the cluster's event log fans it out. */
  store: EventLog;
  /** The `redis` breaker is registered here (so `/health` shows it). */
  breakers: CircuitBreakerRegistry;
  logger: Logger;
}

/** What `/health` shows of Redis. */
export interface RedisHealth {
  /** ioredis connection status of the command connection (`ready` when usable). */
  status: string;
  ok: boolean;
  latencyMs: number | null;
  error?: string;
}

/** The Redis side of a multi-node deployment: the event fan-out and the control channel. */
export interface RedisCluster {
  eventLog: RedisEventLog;
  control: RedisRunControl;
  /** Per-tenant budgets shared by every node. */
  rateLimiter(limits: RateLimits): RedisRateLimiter;
  health(): Promise<RedisHealth>;
  close(): Promise<void>;
}

/**
 * Connects the cluster's three Redis connections (commands, the blocking stream reader, the
 * control subscriber) and starts following. Fails fast when Redis cannot be reached at
 * startup (the server refuses to start half-configured); later outages are survived.
 */
export async function connectRedisCluster(options: RedisClusterOptions): Promise<RedisCluster> {
  const keyPrefix = options.keyPrefix ?? 'cognition:';
  const breaker = options.breakers.get('redis', {
    failureThreshold: 3,
    timeoutSeconds: 5,
  });
  const redis = openRedis(options.url);
  const reader = redis.duplicate();
  const subscriber = redis.duplicate();
  const connections: Redis[] = [redis, reader, subscriber];
  try {
    await Promise.all(connections.map((c) => c.connect()));
  } catch (error) {
    for (const c of connections) c.disconnect();
    throw new Error(
      `COGNITION_REDIS_URL: cannot connect to Redis: ${error instanceof Error ? error.message : String(error)}`,
      { cause: error },
    );
  }
  for (const c of connections) {
    c.on('error', (error: Error) => options.logger.debug({ err: error }, 'redis connection error'));
  }
  const eventLog = new RedisEventLog({
    store: options.store,
    redis,
    reader,
    nodeId: options.nodeId,
    keyPrefix,
    logger: options.logger,
  });
  const control = new RedisRunControl({
    redis,
    subscriber,
    nodeId: options.nodeId,
    keyPrefix,
    breaker,
    logger: options.logger,
  });
  await control.start();
  eventLog.start();
  return {
    eventLog,
    control,
    rateLimiter: (limits) => new RedisRateLimiter(redis, keyPrefix, limits, options.logger),
    async health() {
      const started = performance.now();
      try {
        await guarded(breaker, 'health check', () => redis.ping());
        return { status: redis.status, ok: true, latencyMs: performance.now() - started };
      } catch (error) {
        return {
          status: redis.status,
          ok: false,
          latencyMs: null,
          error: error instanceof Error ? error.message : String(error),
        };
      }
    },
    async close() {
      await eventLog.stop();
      for (const c of connections) c.disconnect();
    },
  };
}
