export { connectRedisCluster } from './cluster';
export type { RedisCluster, RedisClusterOptions, RedisHealth } from './cluster';
export { RedisUnavailableError } from './redis-connection';
export { RedisEventLog } from './redis-event-log';
export { RedisRunControl } from './redis-run-control';
export { RedisRateLimiter } from './redis-rate-limiter';
export type { RateLimits } from './redis-rate-limiter';
