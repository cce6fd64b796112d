export { connectRedisCluster } from './cluster';
export type { RedisCluster, RedisClusterOptions, RedisHealth } from './cluster';
export { RedisUnavailableError } from './redis-connection';
export { RedisEventLog } from './redis-event-log';
export { RedisRunControl } from './redis-run-control';
