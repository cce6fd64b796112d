import type { SuiteContext } from '../context';
import { expectValidationError } from '../helpers';
import { finishedRun, usageOf } from './usage';

/**
 * The aggregates over usage records: sums over the caller's sessions by status (abandoned
 * included), filters, buckets, cost by model. Every backend computes them its own way (a scan,
 * one SQL query); the figures must agree exactly.
 */
export function aggregateTests(ctx: SuiteContext): void {
  describe('usage aggregates', () => {
    /** Two tenants: a has three sessions on two agents, b one with a large usage. */
    async function seed() {
      const a1 = await ctx.backend.sessions.create({ metadata: { team: 'red' } }, { tenant: 'a' });
      const a2 = await ctx.backend.sessions.create(
        { metadata: { team: 'blue' }, agentName: 'readonly' },
        { tenant: 'a' },
      );
      const a3 = await ctx.backend.sessions.create({ metadata: { team: 'red' } }, { tenant: 'a' });
      const b1 = await ctx.backend.sessions.create({ metadata: { team: 'red' } }, { tenant: 'b' });
      await finishedRun(ctx.backend, a1.id, 'completed', usageOf('openai', 'gpt-4o', 100, 10, 1));
      await finishedRun(ctx.backend, a1.id, 'failed', usageOf('openai', 'gpt-4o', 50, 5, 0.5));
      await finishedRun(
        ctx.backend,
        a2.id,
        'completed',
        usageOf('anthropic', 'claude-sonnet-4', 200, 20, 3),
      );
      await finishedRun(
        ctx.backend,
        a2.id,
        'aborted',
        usageOf('local', 'llama', 7, 1, null, { estimated: true }),
      );
      await ctx.backend.sessions.update(a3.id, { status: 'completed' }, { tenant: 'a' });
      await finishedRun(ctx.backend, b1.id, 'completed', usageOf('openai', 'gpt-4o', 9999, 9, 99));
      const answer = await ctx.backend.messages.create({
        sessionId: a1.id,
        role: 'assistant',
        content: 'x',
      });
      await ctx.backend.feedback.set(a1.id, answer.id, { score: 4 }, {});
      const other = await ctx.backend.messages.create({
        sessionId: b1.id,
        role: 'assistant',
        content: 'y',
      });
      await ctx.backend.feedback.set(b1.id, other.id, { score: 1 }, {});
      return { a1, a2, a3, b1 };
    }

    it('sums the figures of the caller’s sessions only, by status', async () => {
      await seed();
      const stats = await ctx.backend.usage.stats({}, { tenant: 'a' });
      expect(stats).toEqual({
        sessions: {
          total: 3,
          byStatus: {
            active: 2,
            abandoned: 0,
            suspended: 0,
            completed: 1,
            failed: 0,
            error: 0,
          },
        },
        runs: { total: 4, failed: 1, aborted: 1 },
        tokensIn: 357,
        tokensOut: 36,
        estimatedTokensIn: 7,
        estimatedTokensOut: 1,
        costUsd: 4.5,
        costComplete: false,
        errorCount: 1,
        feedback: { count: 1, averageScore: 4 },
      });
      const all = await ctx.backend.usage.stats({}, {});
      expect(all.sessions.total).toBe(4);
      expect(all.tokensIn).toBe(357 + 9999);
      expect(all.feedback).toEqual({ count: 2, averageScore: 2.5 });
      expect((await ctx.backend.usage.stats({}, { tenant: 'c' })).sessions.total).toBe(0);
    });

    it('filters by metadata, agent, status and creation time', async () => {
      const { a1 } = await seed();
      const red = await ctx.backend.usage.stats({ metadata: { team: 'red' } }, { tenant: 'a' });
      expect(red.sessions.total).toBe(2);
      expect(red.tokensIn).toBe(150);
      expect(red.costComplete).toBe(true);
      const readonly = await ctx.backend.usage.stats({ agentName: 'readonly' }, { tenant: 'a' });
      expect(readonly).toMatchObject({ tokensIn: 207, runs: { total: 2, aborted: 1 } });
      const completed = await ctx.backend.usage.stats({ status: 'completed' }, { tenant: 'a' });
      expect(completed.sessions).toMatchObject({ total: 1, byStatus: { completed: 1 } });
      const after = new Date(a1.createdAt.getTime() + 1);
      const later = await ctx.backend.usage.stats({ from: after }, { tenant: 'a' });
      expect(later.sessions.total).toBe(2);
      const before = await ctx.backend.usage.stats({ to: after }, { tenant: 'a' });
      expect(before.sessions.total).toBe(1);
      expect(before.tokensIn).toBe(150);
      await expectValidationError(
        ctx.backend.usage.stats({ from: after, to: a1.createdAt }, {}),
        'to',
      );
      await expectValidationError(
        ctx.backend.usage.stats({ bucket: 'week' } as never, {}),
        'bucket',
      );
    });

    it('counts active sessions idle for abandonAfterSeconds as abandoned', async () => {
      await seed();
      const later = new Date(Date.now() + 3600_000);
      const stats = await ctx.backend.usage.stats({}, { tenant: 'a' }, later);
      expect(stats.sessions.byStatus).toMatchObject({ active: 0, abandoned: 2, completed: 1 });
      const longer = await ctx.backend.usage.stats(
        { abandonAfterSeconds: 7200 },
        { tenant: 'a' },
        later,
      );
      expect(longer.sessions.byStatus).toMatchObject({ active: 2, abandoned: 0 });
      const onlyAbandoned = await ctx.backend.usage.stats(
        { status: 'abandoned' },
        { tenant: 'a' },
        later,
      );
      expect(onlyAbandoned.sessions.total).toBe(2);
      expect(onlyAbandoned.tokensIn).toBe(357);
      const onlyActive = await ctx.backend.usage.stats(
        { status: 'active' },
        { tenant: 'a' },
        later,
      );
      expect(onlyActive.sessions.total).toBe(0);
    });

    it('buckets the figures by hour or day of session creation', async () => {
      const { a1, a2, a3 } = await seed();
      const hourOf = (d: Date) => Math.floor(d.getTime() / 3600_000) * 3600_000;
      const expectedHours = [...new Set([a1, a2, a3].map((s) => hourOf(s.createdAt)))].sort();
      const byHour = await ctx.backend.usage.stats({ bucket: 'hour' }, { tenant: 'a' });
      const byDay = await ctx.backend.usage.stats({ bucket: 'day' }, { tenant: 'a' });
      for (const stats of [byHour, byDay]) {
        const buckets = stats.buckets ?? [];
        expect(buckets.length).toBeGreaterThanOrEqual(1);
        expect(buckets.reduce((sum, b) => sum + b.sessions.total, 0)).toBe(3);
        expect(buckets.reduce((sum, b) => sum + b.tokensIn, 0)).toBe(357);
        for (const bucket of buckets) {
          expect(bucket.start.getUTCMinutes()).toBe(0);
          expect(bucket.start.getUTCSeconds()).toBe(0);
        }
      }
      for (const bucket of byDay.buckets ?? []) expect(bucket.start.getUTCHours()).toBe(0);
      expect((byHour.buckets ?? []).map((b) => b.start.getTime())).toEqual(expectedHours);
      expect((await ctx.backend.usage.stats({}, { tenant: 'a' })).buckets).toBeUndefined();
    });

    it('lists cost by model, most expensive first, scoped and filtered', async () => {
      await seed();
      const rows = await ctx.backend.usage.costByModel({}, { tenant: 'a' });
      expect(rows).toEqual([
        {
          provider: 'anthropic',
          model: 'claude-sonnet-4',
          calls: 1,
          tokensIn: 200,
          tokensOut: 20,
          costUsd: 3,
          costComplete: true,
        },
        {
          provider: 'openai',
          model: 'gpt-4o',
          calls: 2,
          tokensIn: 150,
          tokensOut: 15,
          costUsd: 1.5,
          costComplete: true,
        },
        {
          provider: 'local',
          model: 'llama',
          calls: 1,
          tokensIn: 7,
          tokensOut: 1,
          costUsd: 0,
          costComplete: false,
        },
      ]);
      const red = await ctx.backend.usage.costByModel({ metadata: { team: 'red' } }, {});
      expect(red.map((r) => [r.model, r.calls, r.costUsd])).toEqual([['gpt-4o', 3, 100.5]]);
      const later = new Date(Date.now() + 3600_000);
      const idle = await ctx.backend.usage.costByModel(
        { status: 'abandoned', agentName: 'readonly' },
        { tenant: 'a' },
        later,
      );
      expect(idle.map((r) => r.model)).toEqual(['claude-sonnet-4', 'llama']);
      expect(await ctx.backend.usage.costByModel({}, { tenant: 'c' })).toEqual([]);
    });
  });
}
