import type {
  ClaimDecision,
  ClaimDueInput,
  FiringAdmission,
  NewSchedule,
} from '../domains/schedules';
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

/** A pass of node `nodeId` at `now`: each due schedule moves on by one second and fires. */
const passOf = (overrides: Partial<ClaimDueInput> = {}): ClaimDueInput => ({
  now: plus(10),
  limit: 10,
  nodeId: 'node-a',
  decide: (s): ClaimDecision => ({
    nextFireAt: new Date((s.nextFireAt ?? T0).getTime() + 1000),
    reason: 'scheduled',
    sessionId: `${s.id}-session`,
  }),
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

    it('claims ahead of the due time only up to dueBy', async () => {
      const soon = await store().create(cronSchedule({ nextFireAt: plus(2000) }), {});
      await store().create(cronSchedule({ nextFireAt: plus(5000) }), {});
      // Due in 2 s: not taken at now without look-ahead, taken with dueBy 3 s ahead.
      expect(await store().claimDue(passOf({ now: plus(0) }))).toEqual([]);
      const claimed = await store().claimDue(passOf({ now: plus(0), dueBy: plus(3000) }));
      expect(claimed.map((c) => [c.schedule.id, c.dueAt.getTime()])).toEqual([
        [soon.id, plus(2000).getTime()],
      ]);
      // The fire is claimed now (a node dying now leaves it to be taken over after the timeout).
      const [fire] = await store().listFires(soon.id, {}, 10);
      expect(fire?.claimedAt.getTime()).toBe(plus(0).getTime());
    });

    describe('admitFirings', () => {
      /** A claimed occurrence of a new schedule, and its admission. */
      async function claimedFiring(tenant: string, n: number): Promise<FiringAdmission> {
        const s = await store().create(cronSchedule({ nextFireAt: plus(n) }), { tenant });
        const [claimed] = await store().claimDue(
          passOf({ now: plus(n), dueBy: plus(n), limit: 1 }),
        );
        if (claimed?.schedule.id !== s.id) throw new Error('expected the claim of ' + s.id);
        return {
          scheduleId: s.id,
          dueAt: claimed.dueAt,
          cleanup: 'pending',
          scope: { tenant },
          session: {
            id: uid('fire-ses'),
            agentName: 'default',
            config: {},
            metadata: { team: 'ops', schedule_id: s.id },
          },
          run: {
            id: uid('fire-run'),
            messageId: uid('fire-msg'),
            idempotencyKey: `schedule:${s.id}:${claimed.dueAt.toISOString()}`,
            callbackUrl: 'https://example.com/hook',
            ownerNode: 'node-a',
            leaseExpiresAt: plus(60_000),
          },
          message: { content: 'report «ünïcode»', metadata: { schedule_id: s.id } },
        };
      }

      it('stores each firing once: its session, queued run, message and fire', async () => {
        const firings = [await claimedFiring('a', 0), await claimedFiring('b', 1)];
        const admitted = await store().admitFirings(firings);
        expect(admitted.map((a) => a.run.id)).toEqual(firings.map((f) => f.run.id));
        for (const [i, f] of firings.entries()) {
          const tenant = i === 0 ? 'a' : 'b';
          const session = await ctx.backend.sessions.get(f.session.id, { tenant });
          expect(session).toMatchObject({
            id: f.session.id,
            agentName: 'default',
            scopes: { tenant },
            metadata: f.session.metadata,
            messageCount: 1,
          });
          expect(admitted[i]?.session).toMatchObject({
            id: f.session.id,
            scopes: { tenant },
            messageCount: 1,
            threadId: session?.threadId,
          });
          expect(await ctx.backend.sessions.get(f.session.id, { tenant: 'other' })).toBeNull();
          const run = await ctx.backend.runs.get(f.run.id);
          expect(run).toMatchObject({
            sessionId: f.session.id,
            status: 'queued',
            inputMessageId: f.run.messageId,
            idempotencyKey: f.run.idempotencyKey,
            callbackUrl: 'https://example.com/hook',
            ownerNode: 'node-a',
            leaseExpiresAt: plus(60_000),
          });
          expect(admitted[i]?.run).toMatchObject({ id: f.run.id, status: 'queued' });
          expect((await ctx.backend.runs.getActive(f.session.id))?.id).toBe(f.run.id);
          expect(await ctx.backend.runs.pendingInput(f.run.id)).toEqual({
            messageId: f.run.messageId,
            content: f.message.content,
            parentId: null,
            metadata: f.message.metadata,
          });
          const messages = await ctx.backend.messages.listAll(f.session.id, {});
          expect(messages.map((m) => [m.id, m.role, m.content, m.metadata])).toEqual([
            [f.run.messageId, 'user', f.message.content, f.message.metadata],
          ]);
          expect(admitted[i]?.message).toMatchObject({ id: f.run.messageId, role: 'user' });
          const [fire] = await store().listFires(f.scheduleId, {}, 10);
          expect(fire).toMatchObject({
            runId: f.run.id,
            sessionId: f.session.id,
            cleanup: 'pending',
          });
        }
        // Admitted twice (a retry, another node): each firing is stored once.
        const again = await store().admitFirings(
          firings.map((f) => ({ ...f, run: { ...f.run, id: uid('retry-run') } })),
        );
        expect(again).toEqual([]);
        for (const f of firings) {
          expect((await ctx.backend.runs.list(f.session.id)).map((r) => r.id)).toEqual([f.run.id]);
          expect(await ctx.backend.messages.listAll(f.session.id, {})).toHaveLength(1);
        }
        // Concurrently: one admission stores it, the other leaves it out.
        const third = await claimedFiring('a', 2);
        const both = await Promise.all([
          store().admitFirings([third]),
          store().admitFirings([{ ...third, run: { ...third.run, id: uid('rival-run') } }]),
        ]);
        expect(both.map((b) => b.length).sort()).toEqual([0, 1]);
        expect(await ctx.backend.runs.list(third.session.id)).toHaveLength(1);
        expect(await store().admitFirings([])).toEqual([]);
      });

      it('stores nothing of a batch that fails', async () => {
        const first = await claimedFiring('a', 0);
        const taken = await claimedFiring('a', 1);
        await store().admitFirings([taken]);
        // The second firing's run id is in use: the batch is refused whole.
        const second = await claimedFiring('a', 2);
        await expectStorageError(
          store().admitFirings([first, { ...second, run: { ...second.run, id: taken.run.id } }]),
          'CONFLICT',
        );
        expect(await ctx.backend.sessions.get(first.session.id, {})).toBeNull();
        expect(await ctx.backend.sessions.get(second.session.id, {})).toBeNull();
        expect(await ctx.backend.runs.get(first.run.id)).toBeNull();
        const [fire] = await store().listFires(first.scheduleId, {}, 10);
        expect(fire).toMatchObject({ runId: null, cleanup: 'none' });
        // The same batch with its own ids goes through.
        expect(await store().admitFirings([first, second])).toHaveLength(2);
      });
    });

    it('claims the due enabled schedules of every tenant, earliest first, up to the limit', async () => {
      const late = await store().create(cronSchedule({ nextFireAt: plus(500) }), { tenant: 'a' });
      const early = await store().create(cronSchedule({ nextFireAt: T0 }), { tenant: 'b' });
      const future = await store().create(cronSchedule({ nextFireAt: plus(5000) }), {});
      await store().create(cronSchedule({ enabled: false, nextFireAt: T0 }), {});
      await store().create(cronSchedule({ nextFireAt: null }), {});
      const seen: string[] = [];
      const first = await store().claimDue(
        passOf({
          now: plus(1000),
          limit: 1,
          decide: (s) => {
            seen.push(s.id);
            return { nextFireAt: plus(9000), reason: 'scheduled', sessionId: null };
          },
        }),
      );
      expect(seen).toEqual([early.id]);
      expect(first).toHaveLength(1);
      expect(first).toMatchObject([
        {
          schedule: {
            id: early.id,
            nextFireAt: T0,
            scope: { tenant: 'b' },
          },
          dueAt: T0,
          nextFireAt: plus(9000),
          reason: 'scheduled',
          sessionId: null,
        },
      ]);
      expect(await store().listFires(early.id, {}, 10)).toMatchObject([{ sessionId: null }]);
      const rest = await store().claimDue(passOf({ now: plus(1000) }));
      expect(rest.map((c) => [c.schedule.id, c.dueAt])).toEqual([[late.id, plus(500)]]);
      expect(await store().get(late.id, {})).toMatchObject({
        nextFireAt: plus(1500),
        lastFiredAt: plus(500),
      });
      expect(await store().get(future.id, {})).toMatchObject({ lastFiredAt: null });
      expect(await store().claimDue(passOf({ now: plus(1000) }))).toEqual([]);
    });

    it('gives each due occurrence to exactly one of concurrent passes, and records its fire', async () => {
      const ids: string[] = [];
      for (let i = 0; i < 12; i += 1) {
        ids.push((await store().create(cronSchedule({ nextFireAt: plus(i) }), { tenant: 'a' })).id);
      }
      const passes = await Promise.all(
        ['n1', 'n2', 'n3', 'n4', 'n5', 'n6'].map((nodeId) =>
          store().claimDue(passOf({ nodeId, limit: 5, now: plus(100) })),
        ),
      );
      const claimed = passes.flat().map((c) => c.schedule.id);
      expect([...claimed].sort()).toEqual([...ids].sort());
      for (const [i, id] of ids.entries()) {
        expect(await store().get(id, {})).toMatchObject({
          nextFireAt: plus(i + 1000),
          lastFiredAt: plus(i),
        });
        const fires = await store().listFires(id, { tenant: 'a' }, 10);
        expect(fires).toHaveLength(1);
        expect(fires).toMatchObject([
          {
            scheduleId: id,
            dueAt: plus(i),
            claimedAt: plus(100),
            reason: 'scheduled',
            runId: null,
            sessionId: `${id}-session`,
            cleanup: 'none',
          },
        ]);
        const node = passes.findIndex((p) => p.some((c) => c.schedule.id === id));
        expect(fires[0]?.nodeId).toBe(`n${node + 1}`);
      }
      expect(await store().listFires(ids[0] ?? '', { tenant: 'b' }, 10)).toEqual([]);
      // The next occurrences are not due yet; a disabled schedule is never claimed.
      expect(await store().claimDue(passOf({ now: plus(500) }))).toEqual([]);
      await store().update(ids[0] ?? '', { enabled: false }, {});
      // (its next occurrence, plus(1000), is due then; the others' are not yet)
      expect(await store().claimDue(passOf({ now: plus(1000), limit: 50 }))).toEqual([]);
    });

    it('claims without a fire row when the occurrence is skipped', async () => {
      const s = await store().create(cronSchedule(), {});
      const claimed = await store().claimDue(
        passOf({ decide: () => ({ nextFireAt: null, reason: null, sessionId: null }) }),
      );
      expect(claimed).toMatchObject([{ dueAt: T0, nextFireAt: null, reason: null }]);
      expect(await store().get(s.id, {})).toMatchObject({ nextFireAt: null, lastFiredAt: T0 });
      expect(await store().listFires(s.id, {}, 10)).toEqual([]);
      expect(await store().claimDue(passOf({ now: plus(10_000) }))).toEqual([]);
    });

    it('records manual fires once per due time, updates fires, lists the unsettled ones', async () => {
      const s = await store().create(cronSchedule(), {});
      await store().claimDue(passOf());
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
      // Runs recorded in one write; a fire that does not exist is passed over.
      await store().addFire({ ...manual, dueAt: plus(500), reason: 'manual' });
      await store().addFire({ ...manual, dueAt: plus(550), reason: 'manual' });
      await store().recordRuns([
        { scheduleId: s.id, dueAt: plus(500), runId: 'run-5', sessionId: 'ses-5', cleanup: 'none' },
        {
          scheduleId: s.id,
          dueAt: plus(550),
          runId: 'run-6',
          sessionId: 'ses-6',
          cleanup: 'pending',
        },
        {
          scheduleId: s.id,
          dueAt: plus(9000),
          runId: 'run-x',
          sessionId: 'ses-x',
          cleanup: 'none',
        },
      ]);
      await store().recordRuns([]);
      const recorded = await store().listFires(s.id, {}, 10);
      expect(
        recorded.filter((f) => f.dueAt >= plus(500)).map((f) => [f.runId, f.sessionId, f.cleanup]),
      ).toEqual([
        ['run-6', 'ses-6', 'pending'],
        ['run-5', 'ses-5', 'none'],
      ]);
      await store().updateFire(s.id, plus(550), { cleanup: 'done' });
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
