import type { Run } from '@cognition/contracts';
import type { SendInput, SendResult } from '@cognition/runtime';
import { ScheduleRunner, ScheduleService, silentLogger } from '@cognition/runtime';
import type { StorageBackend } from '@cognition/storage';
import { createPrismaStorage } from '@cognition/storage-prisma';
import { createTestDatabase } from '@cognition/storage-prisma/testing';

/**
 * Three scheduler loops, each on its own connection pool to one PostgreSQL database, with an
 * injected clock (issue 29): every due second is fired by exactly one of them, also while one
 * stops passing and while one dies between its claim and its run. The built-server version of
 * this (three processes, kill -9) is apps/server-e2e's issue-29-schedules spec.
 */
describe('schedules on three nodes of one PostgreSQL database', () => {
  const backends: StorageBackend[] = [];
  let cleanup: () => Promise<void> = () => Promise.resolve();
  afterAll(async () => {
    await Promise.all(backends.map((b) => b.close()));
    await cleanup();
  });

  it('fires each due second exactly once, none lost', async () => {
    const db = await createTestDatabase('postgresql');
    if (db.provider !== 'postgresql') throw new Error('expected PostgreSQL');
    cleanup = () => db.cleanup();
    for (let i = 0; i < 3; i += 1) {
      const backend = createPrismaStorage({ provider: 'postgresql', url: db.url, poolSize: 4 });
      await backend.initialize();
      backends.push(backend);
    }
    let now = new Date('2026-06-01T08:00:00.400Z');
    const clock = { now: () => new Date(now.getTime()) };
    // The runs the "admission" created, by idempotency key: a retried firing must find its run.
    const runs = new Map<string, SendInput>();
    let failNext = false;
    let calls = 0;
    const send = (input: SendInput): Promise<SendResult> => {
      calls += 1;
      if (failNext) {
        failNext = false; // this node "dies" between its claim and its run
        return Promise.reject(Object.assign(new Error('gone'), { code: 'UNAVAILABLE' }));
      }
      const key = input.idempotencyKey ?? '';
      const created = !runs.has(key);
      if (created) runs.set(key, input);
      const run = { id: `run-${key}`, createdAt: clock.now() } as Run;
      return Promise.resolve({ run, created } as SendResult);
    };
    const runners = backends.map(
      (storage, i) =>
        new ScheduleRunner({
          storage,
          send,
          deleteSession: () => Promise.resolve(),
          nodeId: `node-${i + 1}`,
          clock,
          claimTimeoutMs: 3000,
          logger: silentLogger,
        }),
    );
    const service = new ScheduleService({
      storage: backends[0] as StorageBackend,
      runner: runners[0] as ScheduleRunner,
      validateSessionInput: () => Promise.resolve(),
      allowPrivateCallbacks: true,
      clock,
    });
    const schedule = await service.create(
      { expression: '* * * * * *', target: { kind: 'new_session' }, content: 'tick' },
      {},
    );
    for (let step = 1; step <= 30; step += 1) {
      now = new Date(now.getTime() + 1000);
      if (step === 12) failNext = true;
      // node-2 is down for steps 10 to 20; the others pass at the same time.
      const passing = runners.filter((_r, i) => !(i === 1 && step >= 10 && step <= 20));
      await Promise.all(passing.map((r) => r.tick().catch(() => undefined)));
    }
    const due = [...runs.values()].map((s) => s.metadata?.['schedule_due_at']).sort();
    const expected = Array.from({ length: 30 }, (_v, i) =>
      new Date(Date.parse('2026-06-01T08:00:01.000Z') + i * 1000).toISOString(),
    );
    expect(due).toEqual(expected);
    // Each occurrence was sent once by its one claimer, plus the one retry of the failed send:
    // a second claimer of any occurrence would add a call (the run map would hide it).
    expect(calls).toBe(31);
    const fires = await service.fires(schedule.id, {}, 100);
    expect(fires).toHaveLength(30);
    expect(fires.every((f) => f.runId !== null && f.reason === 'scheduled')).toBe(true);
    expect(new Set(fires.map((f) => f.nodeId)).size).toBeGreaterThan(1);
  });
});
