export * from './test-redis';
export * from './private-redis';
export * from './haproxy';
