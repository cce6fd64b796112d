import type { GraphRunKwargs } from '@cognition/contracts';
import type { SuiteContext } from '../context';
import { expectStorageError, expectValidationError } from '../helpers';

function kwargs(input: unknown): GraphRunKwargs {
  return {
    graph_id: 'agent',
    input,
    command: null,
    config: { configurable: { user: 'ada' } },
    context: {},
    stream_mode: ['values', 'updates'],
    stream_subgraphs: false,
  };
}

/** Runs of a `langgraph.json` graph: their kwargs are kept, read back as written by every read. */
export function graphRunTests(ctx: SuiteContext): void {
  describe('graph runs (kwargs)', () => {
    it('keeps the kwargs of a graph run through every read; an agent run has none', async () => {
      const session = await ctx.backend.sessions.create({}, {});
      const made = kwargs({ messages: [{ type: 'human', content: 'hi' }], n: 1.5, ok: null });
      const { run } = await ctx.backend.runs.create({ sessionId: session.id, kwargs: made });
      expect(run.kwargs).toEqual(made);
      expect(run.inputMessageId).toBeNull();
      expect((await ctx.backend.runs.get(run.id))?.kwargs).toEqual(made);
      expect((await ctx.backend.runs.getActive(session.id))?.kwargs).toEqual(made);
      expect((await ctx.backend.runs.list(session.id))[0]?.kwargs).toEqual(made);
      expect((await ctx.backend.runs.listActive()).find((r) => r.id === run.id)?.kwargs).toEqual(
        made,
      );
      const ended = await ctx.backend.runs.update(run.id, {
        status: 'completed',
        finishedAt: new Date(),
      });
      expect(ended.kwargs).toEqual(made);
      const other = await ctx.backend.sessions.create({}, {});
      const { run: agentRun } = await ctx.backend.runs.create({ sessionId: other.id });
      expect(agentRun.kwargs).toBeNull();
    });

    it('queues a graph run behind the active one with its kwargs, and promotes it', async () => {
      const session = await ctx.backend.sessions.create({}, {});
      const { run: active } = await ctx.backend.runs.create({ sessionId: session.id });
      const made = { ...kwargs(null), command: { resume: { approved: true } } };
      const { run: pending } = await ctx.backend.runs.create({
        sessionId: session.id,
        status: 'pending',
        multitaskStrategy: 'enqueue',
        kwargs: made,
      });
      expect(pending).toMatchObject({ status: 'pending', kwargs: made });
      expect(await ctx.backend.runs.pendingInput(pending.id)).toBeNull();
      expect((await ctx.backend.runs.listPending(session.id)).map((r) => r.kwargs)).toEqual([made]);
      await ctx.backend.runs.update(active.id, { status: 'completed', finishedAt: new Date() });
      const promoted = await ctx.backend.runs.promote(pending.id);
      expect(promoted).toMatchObject({ status: 'queued', inputMessageId: null, kwargs: made });
      expect((await ctx.backend.runs.getActive(session.id))?.id).toBe(pending.id);
    });

    it('deletes an ended run only, with its callback attempts; a live one is a CONFLICT', async () => {
      const session = await ctx.backend.sessions.create({}, {});
      const { run } = await ctx.backend.runs.create({ sessionId: session.id, kwargs: kwargs(1) });
      await expectStorageError(ctx.backend.runs.delete(run.id), 'CONFLICT');
      expect((await ctx.backend.runs.get(run.id))?.status).toBe('queued');
      await ctx.backend.runs.update(run.id, { status: 'completed', finishedAt: new Date() });
      await ctx.backend.runs.recordCallbackAttempt({
        runId: run.id,
        deliveryId: `dlv_${run.id}`,
        url: 'https://example.test/hook',
        attempt: 1,
        startedAt: new Date(),
        durationMs: 5,
        status: 200,
        ok: true,
        error: null,
      });
      const { run: next } = await ctx.backend.runs.create({ sessionId: session.id });
      expect(await ctx.backend.runs.delete(run.id)).toBe(true);
      expect(await ctx.backend.runs.get(run.id)).toBeNull();
      expect(await ctx.backend.runs.listCallbackAttempts(run.id)).toEqual([]);
      expect((await ctx.backend.runs.list(session.id)).map((r) => r.id)).toEqual([next.id]);
      expect(await ctx.backend.runs.delete(run.id)).toBe(false);
      expect(await ctx.backend.sessions.get(session.id, {})).not.toBeNull();
    });

    it('refuses kwargs without a graph or stream mode, naming the field', async () => {
      const session = await ctx.backend.sessions.create({}, {});
      await expectValidationError(
        ctx.backend.runs.create({
          sessionId: session.id,
          kwargs: { ...kwargs(null), graph_id: '' },
        }),
        'kwargs.graph_id',
      );
      await expectValidationError(
        ctx.backend.runs.create({
          sessionId: session.id,
          kwargs: { ...kwargs(null), stream_mode: [] },
        }),
        'kwargs.stream_mode',
      );
    });
  });
}
