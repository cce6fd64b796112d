import type { Run, Usage } from '@cognition/contracts';
import type { StorageBackend } from '../port';
import type { SuiteContext } from './context';
import { expectStorageError, expectValidationError, sleep, uid } from './helpers';

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

  describe('feedback', () => {
    async function conversation(scope: Record<string, string> = {}) {
      const session = await ctx.backend.sessions.create({}, scope);
      const user = await ctx.backend.messages.create({
        sessionId: session.id,
        role: 'user',
        content: 'question',
      });
      const assistant = await ctx.backend.messages.create({
        sessionId: session.id,
        role: 'assistant',
        content: 'answer',
      });
      return { session, user, assistant };
    }

    it('sets, replaces (idempotently) and deletes the feedback of an assistant message', async () => {
      const { session, assistant } = await conversation();
      const first = await ctx.backend.feedback.set(
        session.id,
        assistant.id,
        { score: 2, text: 'meh' },
        {},
      );
      expect(first).toMatchObject({ score: 2, text: 'meh' });
      const again = await ctx.backend.feedback.set(session.id, assistant.id, { score: 5 }, {});
      expect(again).toMatchObject({ score: 5, text: null });
      expect(again.createdAt.getTime()).toBe(first.createdAt.getTime());
      await ctx.backend.feedback.set(session.id, assistant.id, { score: 5 }, {});
      const read = await ctx.backend.feedback.forMessages(session.id, [assistant.id, 'other']);
      expect([...read.keys()]).toEqual([assistant.id]);
      expect(read.get(assistant.id)).toMatchObject({ score: 5, text: null });
      const stats = await ctx.backend.usage.stats({}, {});
      expect(stats.feedback).toEqual({ count: 1, averageScore: 5 });
      expect(await ctx.backend.feedback.delete(session.id, assistant.id, {})).toBe(true);
      expect(await ctx.backend.feedback.delete(session.id, assistant.id, {})).toBe(false);
      expect((await ctx.backend.feedback.forMessages(session.id, [assistant.id])).size).toBe(0);
      expect((await ctx.backend.usage.stats({}, {})).feedback).toEqual({
        count: 0,
        averageScore: null,
      });
    });

    it('refuses other roles, unknown messages, other scopes and bad scores', async () => {
      const { session, user, assistant } = await conversation({ tenant: 'a' });
      const notAssistant = await expectStorageError(
        ctx.backend.feedback.set(session.id, user.id, { score: 3 }, {}),
        'VALIDATION_ERROR',
      );
      expect(notAssistant.details.issues?.map((i) => i.path)).toEqual(['messageId']);
      await expectStorageError(
        ctx.backend.feedback.set(session.id, uid('missing'), { score: 3 }, {}),
        'MESSAGE_NOT_FOUND',
      );
      await expectStorageError(
        ctx.backend.feedback.set(session.id, assistant.id, { score: 3 }, { tenant: 'b' }),
        'SESSION_NOT_FOUND',
      );
      await expectStorageError(
        ctx.backend.feedback.delete(session.id, assistant.id, { tenant: 'b' }),
        'SESSION_NOT_FOUND',
      );
      await expectValidationError(
        ctx.backend.feedback.set(session.id, assistant.id, { score: 6 }, {}),
        'score',
      );
      await expectValidationError(
        ctx.backend.feedback.set(session.id, assistant.id, { score: 0 }, {}),
        'score',
      );
    });

    it('keeps the feedback figures exact under concurrent writes', async () => {
      const { session } = await conversation();
      const answers = [];
      for (let i = 0; i < 8; i += 1) {
        answers.push(
          await ctx.backend.messages.create({
            sessionId: session.id,
            role: 'assistant',
            content: `answer ${i}`,
          }),
        );
      }
      await Promise.all(
        answers.flatMap((answer, i) => [
          ctx.backend.feedback.set(session.id, answer.id, { score: 1 + (i % 5) }, {}),
          ctx.backend.feedback.set(session.id, answer.id, { score: 1 + (i % 5) }, {}),
        ]),
      );
      const stats = await ctx.backend.usage.stats({}, {});
      const sum = answers.reduce((total, _a, i) => total + 1 + (i % 5), 0);
      expect(stats.feedback.count).toBe(8);
      expect(stats.feedback.averageScore).toBeCloseTo(sum / 8, 3);
    });
  });
}
