import type { AgentEventEnvelope } from '@cognition/contracts';
import type { CheckpointTuple } from '@langchain/langgraph-checkpoint';
import type { TestRuntime } from '../testing/test-runtime';
import { collect, contentText, createTestRuntime, waitFor } from '../testing/test-runtime';
import { newRunId } from '../ids';
import { SUPERSEDED_MESSAGE } from './run-context';
import { ScriptedChatModel } from '../testing/scripted-chat-model';

/** Double-texting: a message sent while the session's run is active (`multitaskStrategy`). */
describe('RunManager double-texting', () => {
  let rt: TestRuntime;
  afterEach(async () => {
    await rt.cleanup();
  });

  const contents = async (sessionId: string) =>
    (await rt.storage.messages.listAll(sessionId, {})).map((m) => `${m.role}:${m.content}`);
  const status = async (runId: string) => (await rt.storage.runs.get(runId))?.status;
  const types = (events: AgentEventEnvelope[]) => events.map((e) => e.event.type);
  const running = (runId: string) => async () => (await status(runId)) === 'running';

  async function start(steps: ConstructorParameters<typeof ScriptedChatModel>[0]) {
    const model = new ScriptedChatModel(steps);
    rt = await createTestRuntime({ chatModel: model });
    const session = await rt.createSession();
    const first = await rt.runs.scheduler.send({
      sessionId: session.id,
      scope: {},
      content: 'first',
    });
    await waitFor(running(first.run.id));
    return { model, session, first };
  }

  it('rejects by default and with reject, storing nothing', async () => {
    const { session, first } = await start([{ text: 'slow', hang: true }]);
    for (const multitaskStrategy of [undefined, 'reject'] as const) {
      await expect(
        rt.runs.scheduler.send({
          sessionId: session.id,
          scope: {},
          content: 'second',
          multitaskStrategy,
        }),
      ).rejects.toMatchObject({ code: 'RUN_IN_PROGRESS' });
    }
    expect(await rt.storage.runs.list(session.id)).toHaveLength(1);
    expect(await contents(session.id)).toEqual(['user:first']);
    await rt.runs.abort(session.id, {});
    expect(await status(first.run.id)).toBe('aborted');
  });

  it('refuses an unknown strategy naming the field', async () => {
    const { session } = await start([{ text: 'slow', hang: true }]);
    await expect(
      rt.runs.scheduler.send({
        sessionId: session.id,
        scope: {},
        content: 'second',
        multitaskStrategy: 'later' as never,
      }),
    ).rejects.toMatchObject({
      code: 'VALIDATION_ERROR',
      details: { issues: [expect.objectContaining({ path: 'multitaskStrategy' })] },
    });
    await rt.runs.abort(session.id, {});
  });

  it('enqueue: the new run waits pending, streams queued first, then runs after the active one', async () => {
    const { session, first } = await start([
      { text: ['first ', 'answer'], delayMs: 40 },
      { text: 'second answer' },
      { text: 'third answer' },
    ]);
    const second = await rt.runs.scheduler.send({
      sessionId: session.id,
      scope: {},
      content: 'second',
      multitaskStrategy: 'enqueue',
    });
    const third = await rt.runs.scheduler.send({
      sessionId: session.id,
      scope: {},
      content: 'third',
      multitaskStrategy: 'enqueue',
    });
    expect(second.run).toMatchObject({
      status: 'pending',
      multitaskStrategy: 'enqueue',
      supersedesRunId: first.run.id,
    });
    expect(third.run.status).toBe('pending');
    // Durable as the pending run's input, not yet in the history.
    expect(await rt.storage.runs.pendingInput(second.run.id)).toMatchObject({ content: 'second' });
    expect(await contents(session.id)).toEqual(['user:first']);

    const [secondEvents, thirdEvents] = await Promise.all([
      rt.runs.events(session.id, {}, { runId: second.run.id }).then(collect),
      rt.runs.events(session.id, {}, { runId: third.run.id }).then(collect),
    ]);
    expect(secondEvents[0]?.event).toEqual({ type: 'queued', run_id: second.run.id, ahead: 1 });
    expect(thirdEvents[0]?.event).toEqual({ type: 'queued', run_id: third.run.id, ahead: 2 });
    expect(types(secondEvents).at(-1)).toBe('done');
    expect(types(thirdEvents).at(-1)).toBe('done');
    expect(secondEvents.filter((e) => e.event.type === 'queued')).toHaveLength(1);
    expect(await contents(session.id)).toEqual([
      'user:first',
      'assistant:first answer',
      'user:second',
      'assistant:second answer',
      'user:third',
      'assistant:third answer',
    ]);
    const rows = await rt.storage.messages.listAll(session.id, {});
    expect(rows[2]?.id).toBe(second.message.id);
    expect(await status(first.run.id)).toBe('completed');
    expect(await status(second.run.id)).toBe('completed');
    expect(await status(third.run.id)).toBe('completed');
    // A client that saw `queued` and reconnects gets the rest exactly once.
    const again = await collect(
      await rt.runs.events(
        session.id,
        {},
        { runId: second.run.id, lastEventId: secondEvents[0]?.id },
      ),
    );
    expect(again.slice(1).map((e) => e.id)).toEqual(secondEvents.slice(1).map((e) => e.id));
  });

  it('interrupt: the active run ends interrupted with its partial answer, then the new one runs', async () => {
    const { model, session, first } = await start([
      { text: 'partial answer', hang: true },
      { text: 'answer to the interruption' },
    ]);
    await waitFor(() => model.calls.length === 1);
    const firstStream = rt.runs.events(session.id, {}, { runId: first.run.id }).then(collect);
    const second = await rt.runs.scheduler.send({
      sessionId: session.id,
      scope: {},
      content: 'actually, this',
      multitaskStrategy: 'interrupt',
    });
    const events = await collect(await rt.runs.events(session.id, {}, { runId: second.run.id }));
    expect(types(events)[0]).toBe('queued');
    expect(types(events).at(-1)).toBe('done');
    const firstEvents = await firstStream;
    expect(firstEvents.at(-1)?.event).toMatchObject({ type: 'error', code: 'UNAVAILABLE' });
    const interrupted = await rt.storage.runs.get(first.run.id);
    expect(interrupted?.status).toBe('interrupted');
    expect(interrupted?.error).toEqual({ code: 'UNAVAILABLE', message: SUPERSEDED_MESSAGE });
    expect(await contents(session.id)).toEqual([
      'user:first',
      'assistant:partial answer',
      'user:actually, this',
      'assistant:answer to the interruption',
    ]);
  });

  it('rollback: the active run goes with its message and checkpoints; the new one starts from before it', async () => {
    const model = new ScriptedChatModel([
      { text: 'zero answer' },
      { text: 'doomed partial', hang: true },
      { text: 'fresh answer' },
    ]);
    rt = await createTestRuntime({ chatModel: model });
    const session = await rt.createSession();
    const zero = await rt.runs.scheduler.send({
      sessionId: session.id,
      scope: {},
      content: 'zero',
    });
    await collect(await rt.runs.events(session.id, {}, { runId: zero.run.id }));
    const before = await rt.storage.checkpointer.getTuple({
      configurable: { thread_id: session.threadId, checkpoint_ns: '' },
    });
    const doomed = await rt.runs.scheduler.send({
      sessionId: session.id,
      scope: {},
      content: 'doomed',
    });
    await waitFor(() => model.calls.length === 2);
    const doomedStream = rt.runs.events(session.id, {}, { runId: doomed.run.id }).then(collect);
    const fresh = await rt.runs.scheduler.send({
      sessionId: session.id,
      scope: {},
      content: 'fresh',
      multitaskStrategy: 'rollback',
    });
    const events = await collect(await rt.runs.events(session.id, {}, { runId: fresh.run.id }));
    expect(types(events)[0]).toBe('queued');
    expect(types(events).at(-1)).toBe('done');
    expect((await doomedStream).at(-1)?.event).toMatchObject({ type: 'error', code: 'ABORTED' });
    expect(await rt.storage.runs.get(doomed.run.id)).toBeNull();
    expect(await contents(session.id)).toEqual([
      'user:zero',
      'assistant:zero answer',
      'user:fresh',
      'assistant:fresh answer',
    ]);
    // The model answering "fresh" never saw the rolled-back turn.
    const lastCall = model.calls[2]?.messages.map((m) => contentText(m)) ?? [];
    expect(lastCall.some((c) => c.includes('doomed'))).toBe(false);
    // The thread continued from the checkpoint before the rolled-back run.
    const history: CheckpointTuple[] = [];
    for await (const tuple of rt.storage.checkpointer.list({
      configurable: { thread_id: session.threadId, checkpoint_ns: '' },
    })) {
      history.push(tuple);
    }
    const doomedLeft = history.filter((t) =>
      JSON.stringify(t.checkpoint.channel_values).includes('doomed'),
    );
    expect(doomedLeft).toEqual([]);
    expect(history.some((t) => t.checkpoint.id === before?.checkpoint.id)).toBe(true);
    expect((await rt.storage.sessions.get(session.id, {}))?.messageCount).toBe(4);
  });

  it('a replayed idempotency key returns the pending run and its message, not a new run', async () => {
    const { session } = await start([{ text: 'slow', hang: true }, { text: 'later' }]);
    const send = () =>
      rt.runs.scheduler.send({
        sessionId: session.id,
        scope: {},
        content: 'second',
        multitaskStrategy: 'enqueue',
        idempotencyKey: 'k-2',
      });
    const a = await send();
    const b = await send();
    expect(b).toMatchObject({ created: false, run: { id: a.run.id } });
    expect(b.message.id).toBe(a.message.id);
    expect(await rt.storage.runs.listPending(session.id)).toHaveLength(1);
    await rt.runs.abort(session.id, {});
  });

  describe('after a crash in the middle (recovery of what a dead process left)', () => {
    let model: ScriptedChatModel;
    /** What a process dies leaving: run A running with no executor, B pending behind it. */
    async function leftByCrash(strategy: 'enqueue' | 'interrupt' | 'rollback') {
      model = new ScriptedChatModel([{ text: 'answer after restart' }, { text: 'second' }]);
      rt = await createTestRuntime({ chatModel: model });
      const session = await rt.createSession();
      const question = await rt.storage.messages.create({
        sessionId: session.id,
        role: 'user',
        content: 'cut off',
      });
      // Run ids are time-ordered (event ids sort by them), as the scheduler makes them.
      const { run: a } = await rt.storage.runs.create({
        id: newRunId(),
        sessionId: session.id,
        status: 'running',
        inputMessageId: question.id,
      });
      const { run: b } = await rt.storage.runs.create({
        id: newRunId(Date.now() + 1),
        sessionId: session.id,
        status: 'pending',
        multitaskStrategy: strategy,
        supersedesRunId: a.id,
        pendingInput: {
          messageId: `m-${strategy}`,
          content: 'newer',
          parentId: null,
          metadata: {},
        },
      });
      return { session, a, b };
    }

    it('enqueue: the cut-off run resumes, then the pending one runs', async () => {
      const { session, a, b } = await leftByCrash('enqueue');
      const report = await rt.runs.recover();
      expect(report.resumed.map((r) => r.id)).toEqual([a.id]);
      await collect(await rt.runs.events(session.id, {}, { runId: b.id }));
      expect(await status(a.id)).toBe('completed');
      expect(await status(b.id)).toBe('completed');
      expect(await contents(session.id)).toEqual([
        'user:cut off',
        'assistant:answer after restart',
        'user:newer',
        'assistant:second',
      ]);
    });

    it('interrupt: the cut-off run ends interrupted instead of resuming, the pending one runs', async () => {
      const { session, a, b } = await leftByCrash('interrupt');
      const report = await rt.runs.recover();
      expect(report.superseded.map((r) => r.id)).toEqual([a.id]);
      expect(report.resumed).toEqual([]);
      const events = await collect(await rt.runs.events(session.id, {}, { runId: b.id }));
      expect(types(events).at(-1)).toBe('done');
      expect(await status(a.id)).toBe('interrupted');
      expect(await contents(session.id)).toEqual([
        'user:cut off',
        'user:newer',
        'assistant:answer after restart',
      ]);
      // The model saw both questions, in the order they were sent.
      const seen = model.calls[0]?.messages.map((m) => contentText(m)) ?? [];
      expect(seen.slice(-2)).toEqual(['cut off', 'newer']);
    });

    it('rollback: the cut-off run is removed instead of resuming, the pending one runs', async () => {
      const { session, a, b } = await leftByCrash('rollback');
      const report = await rt.runs.recover();
      expect(report.superseded.map((r) => r.id)).toEqual([a.id]);
      await collect(await rt.runs.events(session.id, {}, { runId: b.id }));
      expect(await rt.storage.runs.get(a.id)).toBeNull();
      expect(await contents(session.id)).toEqual(['user:newer', 'assistant:answer after restart']);
    });

    it('a pending run whose start was cut off before its message was stored starts with it', async () => {
      const { session, a, b } = await leftByCrash('enqueue');
      await rt.storage.runs.update(a.id, { status: 'completed' });
      await rt.storage.runs.promote(b.id); // promoted; the process died before the insert
      const report = await rt.runs.recover();
      expect(report.resumed.map((r) => r.id)).toEqual([b.id]);
      await collect(await rt.runs.events(session.id, {}, { runId: b.id }));
      expect(await contents(session.id)).toEqual([
        'user:cut off',
        'user:newer',
        'assistant:answer after restart',
      ]);
    });
  });
});
