import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { AgentEventEnvelope } from '@cognition/contracts';
import { isToolMessage } from '@langchain/core/messages';
import { eventId } from '../ids';
import type { TestRuntime } from '../testing/test-runtime';
import { anotherManager, collect, createTestRuntime, waitFor } from '../testing/test-runtime';
import { hangingCommand } from '../testing/fake-execution-backend';
import { ScriptedChatModel } from '../testing/scripted-chat-model';
import type { RunManagerOptions } from './run-manager-options';
import type { RunManager } from './run-manager';

/**
 * A crash is simulated by leaving the first manager's run hanging (never finished, never
 * cancelled) and recovering with a second manager on the same storage and event log, as the
 * next process would.
 */
describe('resuming runs after a crash', () => {
  let rt: TestRuntime;
  let next: RunManager | undefined;
  afterEach(async () => {
    await next?.shutdown(100);
    next = undefined;
    await rt.cleanup();
  });

  const nextProcess = (
    model: ScriptedChatModel,
    maxRecoveries?: number,
    callbacks?: RunManagerOptions['callbacks'],
  ) =>
    anotherManager(rt, model, {
      ...(maxRecoveries !== undefined ? { maxRecoveries } : {}),
      ...(callbacks ? { callbacks } : {}),
    });

  /** The answer a client rebuilds from tokens, dropping what a `resumed` event voids. */
  function answerOf(events: AgentEventEnvelope[]): string {
    let kept: AgentEventEnvelope[] = [];
    for (const e of events) {
      if (e.event.type === 'resumed') {
        const voidAfter = e.event.void_after_event_id;
        kept = kept.filter((k) => k.id <= voidAfter);
      }
      kept.push(e);
    }
    return kept.map((e) => (e.event.type === 'token' ? e.event.content : '')).join('');
  }

  it('redoes the cut-off model call under the same run id, ids continuing, answer stored once', async () => {
    const model = new ScriptedChatModel([
      { toolCalls: [{ name: 'write_file', args: { path: 'a.txt', content: 'A' }, id: 'w1' }] },
      { text: ['Half ', 'an '], hang: true },
    ]);
    rt = await createTestRuntime({ chatModel: model });
    const session = await rt.createSession();
    const { run, message } = await rt.runs.scheduler.send({
      sessionId: session.id,
      scope: {},
      content: 'go',
    });
    const own = async () => (await rt.log.readAfter(session.id)).events;
    await waitFor(async () => (await own()).filter((e) => e.event.type === 'token').length === 2);
    await waitFor(async () => (await rt.storage.messages.listAll(session.id, {})).length === 3);

    model.push({ text: ['The ', 'full ', 'answer.'] });
    next = nextProcess(model);
    const report = await next.recover();
    expect(report.resumed.map((r) => r.id)).toEqual([run.id]);
    const events = await collect(await next.events(session.id, {}, { runId: run.id }));

    expect(events.map((e) => e.event.type)).toEqual([
      'status',
      'tool_call',
      'tool_result',
      'token',
      'token',
      'resumed',
      'token',
      'token',
      'token',
      'usage',
      'status',
      'done',
    ]);
    expect(events.map((e) => e.id)).toEqual(events.map((_e, i) => eventId(run.id, i + 1)));
    expect(events[5]?.event).toEqual({
      type: 'resumed',
      run_id: run.id,
      void_after_event_id: eventId(run.id, 3),
      attempt: 1,
    });
    expect(answerOf(events)).toBe('The full answer.');
    const done = events.at(-1)?.event;
    expect(done?.type === 'done' && done.assistant_data?.content).toBe('The full answer.');
    const rows = await rt.storage.messages.listAll(session.id, {});
    expect(rows.map((r) => [r.role, r.content])).toEqual([
      ['user', 'go'],
      ['assistant', ''],
      ['tool', 'Wrote 1 characters to a.txt'],
      ['assistant', 'The full answer.'],
    ]);
    expect(rows.slice(1).every((r) => r.parentId === message.id)).toBe(true);
    expect((await rt.storage.sessions.get(session.id, {}))?.messageCount).toBe(rows.length);
    expect(await rt.storage.runs.get(run.id)).toMatchObject({ status: 'completed' });
  });

  it('counts the usage of every attempt: the calls before the crash are stored as they end', async () => {
    const model = new ScriptedChatModel([
      {
        toolCalls: [{ name: 'write_file', args: { path: 'a.txt', content: 'A' }, id: 'w1' }],
        usage: { input_tokens: 100, output_tokens: 10 },
      },
      { text: ['Half '], hang: true },
    ]);
    rt = await createTestRuntime({ chatModel: model });
    const session = await rt.createSession();
    const { run } = await rt.runs.scheduler.send({
      sessionId: session.id,
      scope: {},
      content: 'go',
    });
    // The first attempt's finished call is in storage while the process still runs.
    await waitFor(async () => (await rt.storage.runs.get(run.id))?.usage?.inputTokens === 100);
    await waitFor(() => model.calls.length === 2);

    model.push({ text: 'Whole.', usage: { input_tokens: 200, output_tokens: 20 } });
    next = nextProcess(model);
    await next.recover();
    const events = await collect(await next.events(session.id, {}, { runId: run.id }));
    const usage = events.find((e) => e.event.type === 'usage')?.event;
    expect(usage).toMatchObject({ input_tokens: 300, output_tokens: 30 });
    expect((await rt.storage.runs.get(run.id))?.usage).toMatchObject({
      inputTokens: 300,
      outputTokens: 30,
    });
    expect((await rt.storage.usage.get(session.id, {}))?.usage).toMatchObject({
      tokensIn: 300,
      tokensOut: 30,
      runs: 1,
    });
  });

  it('sends the completion callback of a resumed run when it ends', async () => {
    const bodies: string[] = [];
    const receiver = createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => {
        bodies.push(Buffer.concat(chunks).toString('utf8'));
        res.end();
      });
    });
    await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', resolve));
    try {
      const url = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/hook`;
      const model = new ScriptedChatModel([{ text: ['Half '], hang: true }]);
      rt = await createTestRuntime({
        chatModel: model,
        callbacks: { allowPrivateNetwork: true },
      });
      const session = await rt.createSession();
      const { run } = await rt.runs.scheduler.send({
        sessionId: session.id,
        scope: {},
        content: 'go',
        callbackUrl: url,
      });
      await waitFor(() => model.calls.length === 1);

      model.push({ text: 'Whole.' });
      next = nextProcess(model, undefined, { allowPrivateNetwork: true });
      await next.recover();
      await collect(await next.events(session.id, {}, { runId: run.id }));
      await waitFor(() => bodies.length === 1);
      expect(JSON.parse(bodies[0] ?? '{}')).toMatchObject({
        run_id: run.id,
        status: 'completed',
        output: 'Whole.',
      });
    } finally {
      await new Promise((resolve) => receiver.close(resolve));
    }
  });

  it('re-runs idempotent tools of the cut-off step and answers the others "interrupted"', async () => {
    const model = new ScriptedChatModel([
      {
        toolCalls: [
          { name: 'write_file', args: { path: 'b.txt', content: 'B' }, id: 'w1' },
          { name: 'execute', args: { command: 'deploy' }, id: 'x1' },
        ],
      },
    ]);
    rt = await createTestRuntime({ chatModel: model, onExecute: hangingCommand() });
    const session = await rt.createSession();
    const { run } = await rt.runs.scheduler.send({
      sessionId: session.id,
      scope: {},
      content: 'ship it',
    });
    await waitFor(() => (rt.sandbox.backends.get(session.id)?.commands.length ?? 0) > 0);

    model.push({ text: 'Deploy state unknown; checking first.' });
    next = nextProcess(model);
    await next.recover();
    const events = await collect(await next.events(session.id, {}, { runId: run.id }));
    const results = events.flatMap((e) => (e.event.type === 'tool_result' ? [e.event] : []));
    // Before the crash write_file answered; after it, both calls are answered again.
    expect(results.map((r) => [r.tool_call_id, r.exit_code])).toEqual([
      ['w1', 0],
      ['w1', 0],
      ['x1', 130],
    ]);
    expect(results[2]?.output).toContain('not safe to repeat');
    expect(rt.sandbox.backends.get(session.id)?.commands).toHaveLength(1);
    const last = model.calls.at(-1)?.messages.filter(isToolMessage) ?? [];
    expect(last.map((m) => m.tool_call_id)).toEqual(['w1', 'x1']);
    expect(events.at(-1)?.event.type).toBe('done');
  });

  it('hands runs off on a graceful shutdown: left running, no terminal event, resumed next', async () => {
    const model = new ScriptedChatModel([{ text: ['Long '], hang: true }]);
    rt = await createTestRuntime({ chatModel: model });
    const session = await rt.createSession();
    const { run } = await rt.runs.scheduler.send({
      sessionId: session.id,
      scope: {},
      content: 'essay',
    });
    await waitFor(() => model.calls.length === 1);
    await rt.runs.shutdown(100);
    expect((await rt.storage.runs.get(run.id))?.status).toBe('running');
    const before = (await rt.log.readAfter(session.id)).events;
    expect(before.some((e) => e.event.type === 'done' || e.event.type === 'error')).toBe(false);

    model.push({ text: 'Long essay.' });
    next = nextProcess(model);
    expect((await next.recover()).resumed).toHaveLength(1);
    const events = await collect(await next.events(session.id, {}, { runId: run.id }));
    expect(answerOf(events)).toBe('Long essay.');
    expect((await rt.storage.runs.get(run.id))?.status).toBe('completed');
  });

  it('returns from a graceful shutdown once the handed-off executors have stopped', async () => {
    // What closes storage and the workspace after `shutdown` must not pull them from under an
    // executor still unwinding (it could recreate a removed workspace, or query a closed pool).
    const model = new ScriptedChatModel([{ text: ['Long '], hang: true }]);
    rt = await createTestRuntime({ chatModel: model });
    const session = await rt.createSession();
    await rt.runs.scheduler.send({ sessionId: session.id, scope: {}, content: 'essay' });
    await waitFor(() => model.calls.length === 1);
    await rt.runs.shutdown(5000);
    expect(rt.runs.activeRunIds()).toEqual([]);
  });

  it('fails a run resumed more than maxRecoveries times instead of looping', async () => {
    rt = await createTestRuntime({ chatModel: new ScriptedChatModel() });
    const session = await rt.createSession();
    const message = await rt.storage.messages.create({
      sessionId: session.id,
      role: 'user',
      content: 'x',
    });
    const { run } = await rt.storage.runs.create({
      id: 'run_looping',
      sessionId: session.id,
      status: 'running',
      inputMessageId: message.id,
    });
    for (const attempt of [1, 2]) {
      await rt.log.append({
        id: eventId(run.id, attempt),
        sessionId: session.id,
        runId: run.id,
        at: '2026-01-01T00:00:00.000Z',
        event: {
          type: 'resumed',
          run_id: run.id,
          void_after_event_id: eventId(run.id, 0),
          attempt,
        },
      });
    }
    next = nextProcess(new ScriptedChatModel(), 2);
    const report = await next.recover();
    expect(report.failed.map((r) => [r.id, r.status])).toEqual([[run.id, 'failed']]);
    const last = (await rt.log.readAfter(session.id)).events.at(-1);
    expect(last?.id).toBe(eventId(run.id, 3));
    expect(last?.event).toMatchObject({ type: 'error', code: 'UNAVAILABLE' });
    expect(last?.event.type === 'error' && last.event.message).toContain('resumed 2 times');
  });
});
