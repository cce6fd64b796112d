import type { Run, Usage } from '@cognition/contracts';
import type { StorageBackend } from '../../backend';
import type { SuiteContext } from '../context';
import { sleep, uid } from '../helpers';

/** A usage of one run on one model. */
export function usageOf(
  provider: string,
  model: string,
  tokensIn: number,
  tokensOut: number,
  costUsd: number | null,
  extra: Partial<Usage> = {},
): Usage {
  return {
    inputTokens: tokensIn,
    outputTokens: tokensOut,
    costUsd,
    provider,
    model,
    estimated: false,
    ...extra,
  };
}

/** Creates a run and finishes it with `status` and `usage`. */
export async function finishedRun(
  backend: StorageBackend,
  sessionId: string,
  status: Run['status'],
  usage: Usage | null,
): Promise<Run> {
  const { run } = await backend.runs.create({ sessionId, status: 'running' });
  return backend.runs.update(run.id, { status, usage, finishedAt: new Date() });
}

export function usageTests(ctx: SuiteContext): void {
  describe('usage records', () => {
    it('starts empty, then adds every run: tokens, cost, runs, errors, last model and dates', async () => {
      const session = await ctx.backend.sessions.create({}, {});
      const empty = await ctx.backend.usage.get(session.id, {});
      expect(empty).toMatchObject({
        sessionId: session.id,
        models: [],
        usage: { tokensIn: 0, tokensOut: 0, costUsd: 0, costComplete: true, runs: 0 },
      });
      expect(empty?.usage.startedAt).toBeNull();

      const first = await finishedRun(
        ctx.backend,
        session.id,
        'completed',
        usageOf('openai', 'gpt-4o', 1000, 200, 0.0045),
      );
      await sleep(5);
      const second = await finishedRun(
        ctx.backend,
        session.id,
        'failed',
        usageOf('anthropic', 'claude-sonnet-4', 500, 100, 0.003),
      );
      const report = await ctx.backend.usage.get(session.id, {});
      expect(report?.usage).toMatchObject({
        tokensIn: 1500,
        tokensOut: 300,
        costUsd: 0.0075,
        costComplete: true,
        runs: 2,
        errorCount: 1,
        abortedCount: 0,
        lastModel: 'claude-sonnet-4',
        lastProvider: 'anthropic',
      });
      expect(report?.usage.startedAt?.getTime()).toBe(
        (first.startedAt ?? first.createdAt).getTime(),
      );
      expect(report?.usage.lastActivityAt?.getTime()).toBe(second.updatedAt.getTime());
      expect(report?.usage.endedAt?.getTime()).toBe(second.finishedAt?.getTime());
      expect(report?.models).toEqual([
        {
          provider: 'openai',
          model: 'gpt-4o',
          calls: 1,
          tokensIn: 1000,
          tokensOut: 200,
          costUsd: 0.0045,
          costComplete: true,
        },
        {
          provider: 'anthropic',
          model: 'claude-sonnet-4',
          calls: 1,
          tokensIn: 500,
          tokensOut: 100,
          costUsd: 0.003,
          costComplete: true,
        },
      ]);
      // Also readable in bulk, as session lists do.
      const totals = await ctx.backend.usage.totals([session.id, uid('missing')]);
      expect([...totals.keys()]).toEqual([session.id]);
      expect(totals.get(session.id)).toEqual(report?.usage);
    });

    it('attributes a mixed-model run to each model and never counts an unknown price as zero', async () => {
      const session = await ctx.backend.sessions.create({}, {});
      await finishedRun(ctx.backend, session.id, 'completed', {
        ...usageOf('openai', 'gpt-4o', 1300, 260, null),
        models: [
          {
            provider: 'openai',
            model: 'gpt-4o',
            calls: 2,
            inputTokens: 1000,
            outputTokens: 200,
            cachedInputTokens: 0,
            costUsd: 0.0045,
            estimated: false,
          },
          {
            provider: 'local',
            model: 'llama3.1',
            calls: 1,
            inputTokens: 300,
            outputTokens: 60,
            cachedInputTokens: 0,
            costUsd: null,
            estimated: true,
          },
        ],
      });
      const report = await ctx.backend.usage.get(session.id, {});
      expect(report?.usage).toMatchObject({
        tokensIn: 1300,
        tokensOut: 260,
        estimatedTokensIn: 300,
        estimatedTokensOut: 60,
        costUsd: 0.0045,
        costComplete: false,
        runs: 1,
      });
      expect(report?.models).toEqual([
        expect.objectContaining({ model: 'gpt-4o', calls: 2, costUsd: 0.0045, costComplete: true }),
        expect.objectContaining({ model: 'llama3.1', calls: 1, costUsd: 0, costComplete: false }),
      ]);
    });

    it('replaces a run’s contribution when the run is written again (no double counting)', async () => {
      const session = await ctx.backend.sessions.create({}, {});
      const { run } = await ctx.backend.runs.create({ sessionId: session.id, status: 'running' });
      expect((await ctx.backend.usage.get(session.id, {}))?.usage).toMatchObject({
        runs: 1,
        endedAt: null,
      });
      await ctx.backend.runs.update(run.id, {
        status: 'interrupted',
        usage: usageOf('openai', 'gpt-4o', 100, 10, 0.001),
      });
      await ctx.backend.runs.update(run.id, { status: 'running' });
      await ctx.backend.runs.update(run.id, {
        status: 'aborted',
        usage: usageOf('openai', 'gpt-4o', 250, 20, 0.002),
        finishedAt: new Date(),
      });
      const report = await ctx.backend.usage.get(session.id, {});
      expect(report?.usage).toMatchObject({
        runs: 1,
        abortedCount: 1,
        errorCount: 0,
        tokensIn: 250,
        tokensOut: 20,
        costUsd: 0.002,
      });
      expect(report?.usage.endedAt).toBeInstanceOf(Date);
      expect(report?.models).toEqual([
        expect.objectContaining({ model: 'gpt-4o', calls: 1, tokensIn: 250 }),
      ]);
    });

    it('adds up concurrent run writes on one session exactly', async () => {
      const session = await ctx.backend.sessions.create({}, {});
      const runs: Run[] = [];
      for (let i = 0; i < 12; i += 1) {
        const { run } = await ctx.backend.runs.create({ sessionId: session.id, status: 'running' });
        runs.push(await ctx.backend.runs.update(run.id, { status: 'interrupted' }));
      }
      await Promise.all(
        runs.map((run, i) =>
          ctx.backend.runs.update(run.id, {
            status: i % 3 === 0 ? 'failed' : 'completed',
            usage: usageOf(i % 2 === 0 ? 'openai' : 'anthropic', `m${i % 2}`, 100 + i, 10, 0.25),
            finishedAt: new Date(),
          }),
        ),
      );
      const report = await ctx.backend.usage.get(session.id, {});
      const tokensIn = runs.reduce((sum, _run, i) => sum + 100 + i, 0);
      expect(report?.usage).toMatchObject({
        runs: 12,
        errorCount: 4,
        tokensIn,
        tokensOut: 120,
        costUsd: 3,
        costComplete: true,
      });
      // Same cost: the one with more tokens first.
      expect(report?.models.map((m) => [m.model, m.calls, m.costUsd])).toEqual([
        ['m1', 6, 1.5],
        ['m0', 6, 1.5],
      ]);
    });

    it('hides another scope’s usage and forgets a deleted session’s', async () => {
      const session = await ctx.backend.sessions.create({}, { tenant: 'a' });
      await finishedRun(ctx.backend, session.id, 'completed', usageOf('openai', 'gpt-4o', 1, 1, 0));
      expect(await ctx.backend.usage.get(session.id, { tenant: 'b' })).toBeNull();
      expect(await ctx.backend.usage.get(uid('missing'), {})).toBeNull();
      expect(await ctx.backend.usage.get(session.id, { tenant: 'a' })).not.toBeNull();
      await ctx.backend.sessions.delete(session.id, {});
      expect(await ctx.backend.usage.get(session.id, {})).toBeNull();
      expect((await ctx.backend.usage.totals([session.id])).size).toBe(0);
    });
  });
}
