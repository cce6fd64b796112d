import type { StorageHealth } from '@cognition/storage';
import type { ApiTestBed } from '../../testing/test-bed';
import { createApiTestBed } from '../../testing/test-bed';

describe('health router', () => {
  let bed: ApiTestBed;

  beforeEach(async () => {
    bed = await createApiTestBed();
  });

  afterEach(async () => {
    jest.restoreAllMocks();
    await bed.cleanup();
  });

  it('reports healthy storage, the version and active sessions within the caller scope', async () => {
    const alice = bed.as({ user: 'alice' });
    await alice.sessions.create({});
    const done = await alice.sessions.create({});
    await alice.sessions.update({ id: done.id, status: 'completed' });
    await bed.as({ user: 'bob' }).sessions.create({});

    const report = await alice.health.get();
    expect(report).toMatchObject({
      status: 'healthy',
      version: '1.2.3-test',
      activeSessions: 1,
      runs: { executing: 0, queued: 0, limit: 32 },
      storage: { backend: 'memory', ok: true },
      circuitBreakers: [],
    });
    expect((await bed.as().health.get()).activeSessions).toBe(2);
    expect(await alice.health.ready()).toEqual({ ready: true });
  });

  it('is degraded while a circuit breaker is open and lists the snapshots', async () => {
    const openedAt = new Date('2030-01-01T00:00:00Z');
    bed.breakerSnapshots.push({
      name: 'llm:openai',
      state: 'OPEN',
      totalCalls: 5,
      failedCalls: 5,
      rejectedCalls: 2,
      consecutiveFailures: 5,
      openedAt,
    });
    const report = await bed.as().health.get();
    expect(report.status).toBe('degraded');
    expect(report.circuitBreakers).toEqual([
      expect.objectContaining({ name: 'llm:openai', openedAt }),
    ]);
    expect(await bed.as().health.ready()).toEqual({ ready: true });
  });

  it('is degraded and not ready when storage fails or throws', async () => {
    const down: StorageHealth = { backend: 'memory', ok: false, latencyMs: 1, error: 'closed' };
    jest.spyOn(bed.storage, 'healthCheck').mockResolvedValueOnce(down).mockResolvedValueOnce(down);
    const report = await bed.as().health.get();
    expect(report).toMatchObject({ status: 'degraded', activeSessions: null, storage: down });
    expect(await bed.as().health.ready()).toEqual({ ready: false });

    jest.spyOn(bed.storage, 'healthCheck').mockRejectedValue(new Error('connection refused'));
    expect(await bed.as().health.get()).toMatchObject({
      status: 'degraded',
      storage: { backend: 'memory', ok: false, error: 'connection refused' },
    });
    expect(await bed.as().health.ready()).toEqual({ ready: false });
  });
});
