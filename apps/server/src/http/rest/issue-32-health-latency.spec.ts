import request from 'supertest';
import type { TestApp } from '../../testing/test-app';
import { createTestApp } from '../../testing/test-app';

/** Issue 32: `/health` printed `latency_ms` as `0.41708399999999415`; now to 0.1 ms, a number. */
describe('issue 32: /health latency_ms', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await createTestApp();
  });

  it('is a number rounded to 0.1 ms on REST and tRPC', async () => {
    for (let i = 0; i < 5; i += 1) {
      const rest = await request(t.app).get('/health');
      const latency = (rest.body as { storage: { latency_ms: unknown } }).storage.latency_ms;
      expect(typeof latency).toBe('number');
      // The JSON text itself: at most one decimal.
      expect(rest.text).toMatch(/"latency_ms":\d+(\.\d)?[,}]/);
      const trpc = await request(t.app).get('/trpc/health.get');
      expect(trpc.text).toMatch(/"latencyMs":\d+(\.\d)?[,}]/);
    }
  });
});
