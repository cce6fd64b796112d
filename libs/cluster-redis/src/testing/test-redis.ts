import { randomUUID } from 'node:crypto';

/**
 * The Redis the tests use: `COGNITION_TEST_REDIS_URL`, else the one `npm test` provisions on
 * 127.0.0.1:6379 (tools/provision/ensure-redis.sh). Each test takes its own key prefix.
 */
export const TEST_REDIS_URL = process.env['COGNITION_TEST_REDIS_URL'] ?? 'redis://127.0.0.1:6379';

export function testKeyPrefix(): string {
  return `cognition-test:${randomUUID()}:`;
}
