import type { NewSchedule, ScheduleClaim } from '../domains/schedules';
import type { SuiteContext } from './context';
import { expectStorageError, expectValidationError, uid } from './helpers';

const T0 = new Date('2026-03-01T10:00:00.000Z');
const plus = (ms: number) => new Date(T0.getTime() + ms);

function cronSchedule(overrides: Partial<NewSchedule> = {}): NewSchedule {
  return {
    id: uid('sch'),
    kind: 'cron',
    expression: '* * * * * *',
    timezone: 'Europe/Berlin',
    runAt: null,
    endTime: null,
    enabled: true,
    misfire: 'run_once',
    target: { kind: 'new_session', agentName: 'default', config: {}, onRunCompleted: 'delete' },
    content: 'daily report — «ünïcode»',
    metadata: { team: 'ops' },
    callbackUrl: 'https://example.com/hook',
    multitaskStrategy: 'enqueue',
    nextFireAt: T0,
    ...overrides,
  };
}

const claimOf = (scheduleId: string, overrides: Partial<ScheduleClaim> = {}): ScheduleClaim => ({
  scheduleId,
  dueAt: T0,
  nextFireAt: plus(1000),
  nodeId: 'node-a',
  now: plus(10),
  reason: 'scheduled',
  ...overrides,
});

/** Schedules: tenant-scoped CRUD, due listing, and the one-winner claim of an occurrence. */
export function scheduleTests(ctx: SuiteContext): void {
  describe('schedules', () => {
    const store = () => ctx.backend.schedules;

    it('creates, reads back exactly, updates and deletes a schedule in its scope', async () => {
      const input = cronSchedule();
      const created = await store().create(input, { tenant: 'a' });
      expect(created).toMatchObject({ ...input, scope: { tenant: 'a' }, lastFiredAt: null });
      expect(created.createdAt).toBeInstanceOf(Date);
      expect(await store().get(created.id, { tenant: 'a' })).toEqual(created);
      expect(await store().get(created.id, {})).toEqual(created);
      expect(await store().get(created.id, { tenant: 'b' })).toBeNull();

      const updated = await store().update(
        created.id,
        { enabled: false, expression: '0 30 2 * * *', nextFireAt: plus(3600_000), endTime: null },
        { tenant: 'a' },
      );
      expect(updated).toMatchObject({
        enabled: false,
        expression: '0 30 2 * * *',
        nextFireAt: plus(3600_000),
        content: input.content,
      });
      expect(updated.updatedAt.getTime()).toBeGreaterThanOrEqual(created.updatedAt.getTime());
      await expectStorageError(
        store().update(created.id, { enabled: true }, { tenant: 'b' }),
        'NOT_FOUND',
      );
      await expectStorageError(store().update(uid('missing'), { enabled: true }, {}), 'NOT_FOUND');
      expect(await store().delete(created.id, { tenant: 'b' })).toBe(false);
      expect(await store().delete(created.id, { tenant: 'a' })).toBe(true);
      expect(await store().get(created.id, {})).toBeNull();
      expect(await store().delete(created.id, {})).toBe(false);
    });

    it('refuses bad input naming the field, storing nothing', async () => {
      await expectValidationError(
        store().create(cronSchedule({ misfire: 'always' as 'skip' }), {}),
        'misfire',
      );
      await expectValidationError(
        store().create(
          cronSchedule({ target: { kind: 'session' } as unknown as NewSchedule['target'] }),
          {},
        ),
        'target',
      );
      expect((await store().list({})).total).toBe(0);
      await expectValidationError(store().list({}, { limit: 0 }), 'limit');
    });

    it('lists newest first with filters, scope, paging and total', async () => {
      const ids: string[] = [];
      for (let i = 0; i < 4; i += 1) {
        const s = await store().create(
          cronSchedule({
            enabled: i % 2 === 0,
            metadata: { n: String(i) },
            target:
              i === 3
                ? { kind: 'session', sessionId: 'ses-1' }
                : { kind: 'new_session', agentName: 'default', config: {}, onRunCompleted: 'keep' },
          }),
          { tenant: i === 2 ? 'b' : 'a' },
        );
        ids.push(s.id);
      }
      const all = await store().list({ tenant: 'a' });
      expect(all.total).toBe(3);
      expect(all.items.map((s) => s.id)).toEqual([ids[3], ids[1], ids[0]]);
      expect((await store().list({})).total).toBe(4);
      expect(
        (await store().list({ tenant: 'a' }, { enabled: true })).items.map((s) => s.id),
      ).toEqual([ids[0]]);
      expect((await store().list({}, { sessionId: 'ses-1' })).items.map((s) => s.id)).toEqual([
        ids[3],
      ]);
      expect((await store().list({}, { metadata: { n: '1' } })).items.map((s) => s.id)).toEqual([
        ids[1],
      ]);
      const page = await store().list({ tenant: 'a' }, { limit: 1, offset: 1 });
      expect(page).toMatchObject({ total: 3 });
      expect(page.items.map((s) => s.id)).toEqual([ids[1]]);
    });

    it('lists due enabled schedules of every tenant, earliest first', async () => {
      const late = await store().create(cronSchedule({ nextFireAt: plus(500) }), { tenant: 'a' });
      const early = await store().create(cronSchedule({ nextFireAt: T0 }), { tenant: 'b' });
      await store().create(cronSchedule({ nextFireAt: plus(5000) }), {});
      await store().create(cronSchedule({ enabled: false, nextFireAt: T0 }), {});
      await store().create(cronSchedule({ nextFireAt: null }), {});
      const due = await store().listDue(plus(1000), 10);
      expect(due.map((s) => s.id)).toEqual([early.id, late.id]);
      expect((await store().listDue(plus(1000), 1)).map((s) => s.id)).toEqual([early.id]);
    });

    it('lets exactly one of concurrent claims of an occurrence win, and records its fire', async () => {
      const s = await store().create(cronSchedule(), { tenant: 'a' });
      const results = await Promise.all(
        ['n1', 'n2', 'n3', 'n4', 'n5', 'n6'].map((nodeId) =>
          store().claim(claimOf(s.id, { nodeId })),
        ),
      );
      expect(results.filter(Boolean)).toHaveLength(1);
      const after = await store().get(s.id, {});
      expect(after).toMatchObject({ nextFireAt: plus(1000), lastFiredAt: T0 });
      const fires = await store().listFires(s.id, { tenant: 'a' }, 10);
      expect(fires).toHaveLength(1);
      expect(fires[0]).toMatchObject({
        scheduleId: s.id,
        dueAt: T0,
        reason: 'scheduled',
        runId: null,
        sessionId: null,
        cleanup: 'none',
      });
      // A claim of an occurrence already taken, or of a disabled schedule, loses.
      expect(await store().claim(claimOf(s.id))).toBe(false);
      await store().update(s.id, { enabled: false }, {});
      expect(
        await store().claim(claimOf(s.id, { dueAt: plus(1000), nextFireAt: plus(2000) })),
      ).toBe(false);
      expect(await store().listFires(s.id, { tenant: 'b' }, 10)).toEqual([]);
    });

    it('claims without a fire row when the occurrence is skipped', async () => {
      const s = await store().create(cronSchedule(), {});
      expect(await store().claim(claimOf(s.id, { reason: null, nextFireAt: null }))).toBe(true);
      expect(await store().get(s.id, {})).toMatchObject({ nextFireAt: null, lastFiredAt: T0 });
      expect(await store().listFires(s.id, {}, 10)).toEqual([]);
      expect(await store().listDue(plus(10_000), 10)).toEqual([]);
    });

    it('records manual fires once per due time, updates fires, lists the unsettled ones', async () => {
      const s = await store().create(cronSchedule(), {});
      await store().claim(claimOf(s.id));
      const manual = { scheduleId: s.id, dueAt: plus(400), claimedAt: plus(400), nodeId: 'n' };
      await store().addFire({ ...manual, reason: 'manual' });
      await expectStorageError(store().addFire({ ...manual, reason: 'manual' }), 'CONFLICT');
      expect((await store().listFires(s.id, {}, 10)).map((f) => f.reason)).toEqual([
        'manual',
        'scheduled',
      ]);
      // Unsettled: no run yet and claimed before the cut-off, or a cleanup pending.
      expect(
        (await store().listUnsettledFires(plus(100), 10)).map((f) => f.dueAt.getTime()),
      ).toEqual([T0.getTime()]);
      // Of concurrent takeovers of a dead claimer's fire, one wins.
      const [stale] = await store().listUnsettledFires(plus(100), 10);
      if (!stale) throw new Error('expected the unsettled fire');
      const takeovers = await Promise.all(
        ['t1', 't2', 't3'].map((node) => store().reclaimFire(stale, node, plus(200))),
      );
      expect(takeovers.filter(Boolean)).toHaveLength(1);
      expect(await store().listUnsettledFires(plus(100), 10)).toEqual([]);
      await store().updateFire(s.id, T0, {
        runId: 'run-1',
        sessionId: 'ses-1',
        cleanup: 'pending',
      });
      await store().updateFire(s.id, plus(400), { runId: 'run-2', sessionId: 'ses-2' });
      const unsettled = await store().listUnsettledFires(plus(100), 10);
      expect(unsettled).toHaveLength(1);
      expect(unsettled[0]).toMatchObject({
        runId: 'run-1',
        sessionId: 'ses-1',
        cleanup: 'pending',
      });
      await store().updateFire(s.id, T0, { cleanup: 'done' });
      expect(await store().listUnsettledFires(plus(100_000), 10)).toEqual([]);
      // A fire given up (no run, cleanup done) is not listed either.
      await store().addFire({ ...manual, dueAt: plus(600), reason: 'manual' });
      expect(await store().listUnsettledFires(plus(100_000), 10)).toHaveLength(1);
      await store().updateFire(s.id, plus(600), { cleanup: 'done' });
      expect(await store().listUnsettledFires(plus(100_000), 10)).toEqual([]);
      await store().updateFire(s.id, plus(9999), { runId: 'ignored' });
      expect(await store().delete(s.id, {})).toBe(true);
      expect(await store().listFires(s.id, {}, 10)).toEqual([]);
    });
  });
}
