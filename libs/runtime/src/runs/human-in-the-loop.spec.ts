import type { AgentEventEnvelope, Session } from '@cognition/contracts';
import { isToolMessage } from '@langchain/core/messages';
import type { AgentDefinition } from '../agents/agent';
import type { RuntimeError } from '../errors';
import { InMemoryEventLog } from '../events/event-log';
import type { TestRuntime } from '../testing/test-runtime';
import {
  anotherManager,
  collect,
  createTestRuntime,
  sendAndCollect,
} from '../testing/test-runtime';
import { ScriptedChatModel } from '../testing/scripted-chat-model';
import type { RunManager } from './run-manager';

const GUARDED: AgentDefinition = {
  name: 'guarded',
  description: 'Asks before writing or executing.',
  mode: 'primary',
  tools: ['read_file', 'write_file', 'execute'],
  model: null,
  temperature: null,
  systemPrompt: 'You are careful.',
  interruptOn: { write_file: ['approve', 'edit', 'reject'], execute: ['approve', 'reject'] },
  mcpServers: [],
  skills: null,
  source: 'test',
};

const WRITE = { name: 'write_file', args: { path: 'a.txt', content: 'A' }, id: 'w1' };
const EXEC = { name: 'execute', args: { command: 'rm -rf build' }, id: 'x1' };

describe('human in the loop', () => {
  let rt: TestRuntime;
  let model: ScriptedChatModel;
  let session: Session;
  let others: RunManager[] = [];

  const start = async (script: ConstructorParameters<typeof ScriptedChatModel>[0]) => {
    model = new ScriptedChatModel(script);
    rt = await createTestRuntime({ chatModel: model, agents: [GUARDED] });
    session = await rt.createSession('guarded');
  };
  afterEach(async () => {
    for (const manager of others) await manager.shutdown(100);
    others = [];
    await rt.cleanup();
  });

  const sandbox = () => rt.sandbox.backends.get(session.id);
  const follow = async (runs: RunManager, runId: string, lastEventId: string) =>
    collect(await runs.events(session.id, {}, { runId, lastEventId }));
  const types = (events: AgentEventEnvelope[]) => events.map((e) => e.event.type);

  async function pause() {
    const sent = await sendAndCollect(rt, session, 'write a.txt and clean up');
    const last = sent.events[sent.events.length - 1];
    expect(last?.event.type).toBe('interrupt');
    return { runId: sent.run.id, events: sent.events, lastId: last?.id ?? '' };
  }

  it('pauses before a listed tool runs, then runs it once approved, on the same run id', async () => {
    await start([
      { toolCalls: [WRITE], usage: { input_tokens: 10, output_tokens: 4 } },
      { text: 'Written.', usage: { input_tokens: 20, output_tokens: 2 } },
    ]);
    const { runId, events, lastId } = await pause();
    expect(types(events)).toEqual(['status', 'tool_call', 'usage', 'status', 'interrupt']);
    expect(events.at(-1)?.event).toEqual({
      type: 'interrupt',
      run_id: runId,
      tool_calls: [
        { id: 'w1', name: 'write_file', args: WRITE.args, allowed: ['approve', 'edit', 'reject'] },
      ],
      allowed: { w1: ['approve', 'edit', 'reject'] },
    });
    const paused = await rt.storage.runs.get(runId);
    expect(paused).toMatchObject({
      status: 'requires_action',
      pendingAction: { tool_calls: [{ id: 'w1', name: 'write_file' }] },
      usage: { inputTokens: 10, outputTokens: 4 },
    });
    expect(sandbox()?.files.get('a.txt')).toBeUndefined();
    // The paused run is listed as the session's, and a new message is refused naming it.
    expect((await rt.storage.runs.getActive(session.id))?.id).toBe(runId);
    await expect(
      rt.runs.scheduler.send({
        sessionId: session.id,
        scope: {},
        content: 'more',
        multitaskStrategy: 'enqueue',
      }),
    ).rejects.toMatchObject({
      code: 'RUN_IN_PROGRESS',
      message: expect.stringContaining(`/runs/${runId}/resume`) as unknown,
    });
    // A stream opened now replays the run and ends at its interrupt.
    expect(types(await collect(await rt.runs.events(session.id, {}, { runId })))).toEqual(
      types(events),
    );

    const resumed = await rt.runs.resume(
      session.id,
      runId,
      [{ tool_call_id: 'w1', type: 'approve' }],
      {},
    );
    expect(resumed.run).toMatchObject({ id: runId, status: 'queued', pendingAction: null });
    expect(resumed.lastEventId).toBe(lastId);
    const after = await follow(rt.runs, runId, lastId);
    expect(types(after)).toEqual([
      'reconnected',
      'status',
      'tool_result',
      'token',
      'usage',
      'status',
      'done',
    ]);
    expect(after.slice(1).every((e) => e.id > lastId)).toBe(true);
    expect(sandbox()?.files.get('a.txt')).toBe('A');
    const done = await rt.storage.runs.get(runId);
    expect(done).toMatchObject({
      status: 'completed',
      usage: { inputTokens: 30, outputTokens: 6 },
    });
    const history = await rt.storage.messages.listAll(session.id, {});
    expect(history.map((m) => m.role)).toEqual(['user', 'assistant', 'tool', 'assistant']);
  });

  it('runs an edited call with the edited arguments, which the history then shows', async () => {
    await start([{ toolCalls: [WRITE] }, { text: 'Written B.' }]);
    const { runId, lastId } = await pause();
    await rt.runs.resume(
      session.id,
      runId,
      [{ tool_call_id: 'w1', type: 'edit', args: { path: 'b.txt', content: 'B' } }],
      {},
    );
    const after = await follow(rt.runs, runId, lastId);
    expect(after.find((e) => e.event.type === 'tool_call')?.event).toEqual({
      type: 'tool_call',
      id: 'w1',
      name: 'write_file',
      args: { path: 'b.txt', content: 'B' },
    });
    expect(sandbox()?.files.get('b.txt')).toBe('B');
    expect(sandbox()?.files.has('a.txt')).toBe(false);
    const assistant = (await rt.storage.messages.listAll(session.id, {})).find(
      (m) => m.role === 'assistant' && m.toolCalls.length > 0,
    );
    expect(assistant?.toolCalls[0]?.args).toEqual({ path: 'b.txt', content: 'B' });
  });

  it('answers a rejected call with the message instead of running it', async () => {
    await start([{ toolCalls: [WRITE, EXEC] }, { text: 'Understood.' }]);
    const { runId, events, lastId } = await pause();
    const interrupt = events.at(-1)?.event;
    expect(interrupt?.type === 'interrupt' && interrupt.tool_calls.map((c) => c.id)).toEqual([
      'w1',
      'x1',
    ]);
    await rt.runs.resume(
      session.id,
      runId,
      [
        { tool_call_id: 'w1', type: 'approve' },
        { tool_call_id: 'x1', type: 'reject', message: 'Never delete build/.' },
      ],
      {},
    );
    const after = await follow(rt.runs, runId, lastId);
    const results = after.flatMap((e) => (e.event.type === 'tool_result' ? [e.event] : []));
    expect(results).toEqual([
      {
        type: 'tool_result',
        tool_call_id: 'w1',
        output: expect.any(String) as unknown,
        exit_code: 0,
      },
      { type: 'tool_result', tool_call_id: 'x1', output: 'Never delete build/.', exit_code: 126 },
    ]);
    expect(sandbox()?.commands).toEqual([]);
    const seen = model.calls[1]?.messages.filter(isToolMessage).map((m) => m.content);
    expect(seen).toContain('Never delete build/.');
    expect(types(after).at(-1)).toBe('done');
  });

  it('refuses decisions that do not fit what the run waits for, naming the decision (422)', async () => {
    await start([{ toolCalls: [WRITE, EXEC] }, { text: 'ok' }]);
    const { runId } = await pause();
    const problems = async (decisions: Parameters<RunManager['resume']>[2]) => {
      const error = (await rt.runs
        .resume(session.id, runId, decisions, {})
        .catch((e: unknown) => e)) as RuntimeError;
      expect(error.code).toBe('VALIDATION_ERROR');
      return error.issues.map((issue) => issue.path);
    };
    expect(
      await problems([
        { tool_call_id: 'nope', type: 'approve' },
        { tool_call_id: 'x1', type: 'approve' },
      ]),
    ).toEqual(['decisions.0.tool_call_id', 'decisions']);
    expect(
      await problems([
        { tool_call_id: 'w1', type: 'approve' },
        { tool_call_id: 'x1', type: 'edit', args: { command: 'ls' } },
      ]),
    ).toEqual(['decisions.1.type']);
    expect(
      await problems([
        { tool_call_id: 'w1', type: 'edit', args: { path: 3 } },
        { tool_call_id: 'x1', type: 'reject' },
      ]),
    ).toEqual(expect.arrayContaining(['decisions.0.args.path']) as unknown);
    // Nothing changed: the run still waits, and a valid resume goes through.
    expect((await rt.storage.runs.get(runId))?.status).toBe('requires_action');
    await rt.runs.resume(
      session.id,
      runId,
      [
        { tool_call_id: 'w1', type: 'reject' },
        { tool_call_id: 'x1', type: 'reject' },
      ],
      {},
    );
  });

  it('lets exactly one of two concurrent resumes win; the other is a conflict', async () => {
    await start([{ toolCalls: [WRITE] }, { text: 'ok' }]);
    const { runId } = await pause();
    const second = anotherManager(rt, model);
    others.push(second);
    const decisions = [{ tool_call_id: 'w1', type: 'approve' as const }];
    const outcomes = await Promise.allSettled([
      rt.runs.resume(session.id, runId, decisions, {}),
      second.resume(session.id, runId, decisions, {}),
    ]);
    expect(outcomes.filter((o) => o.status === 'fulfilled')).toHaveLength(1);
    const rejected = outcomes.find((o) => o.status === 'rejected');
    expect((rejected as PromiseRejectedResult).reason).toMatchObject({ code: 'CONFLICT' });
    const stream = await collect(await rt.runs.events(session.id, {}, { runId }));
    expect(types(stream).at(-1)).toBe('done');
    expect(sandbox()?.files.get('a.txt')).toBe('A');
    expect((await rt.storage.runs.get(runId))?.status).toBe('completed');
  });

  it('aborts a paused run: its stream ends ABORTED and the next message goes on', async () => {
    await start([{ toolCalls: [EXEC] }, { text: 'next answer' }]);
    const { runId, lastId } = await pause();
    const { run: aborted, aborted: delivered } = await rt.runs.abort(session.id, {});
    expect(delivered).toBe(true);
    expect(aborted).toMatchObject({ id: runId, status: 'aborted', pendingAction: null });
    const after = await follow(rt.runs, runId, lastId);
    expect(after.at(-1)?.event).toMatchObject({ type: 'error', code: 'ABORTED' });
    await expect(
      rt.runs.resume(session.id, runId, [{ tool_call_id: 'x1', type: 'approve' }], {}),
    ).rejects.toMatchObject({ code: 'CONFLICT' });
    // The next message answers the dangling call and goes on.
    const next = await sendAndCollect(rt, session, 'never mind');
    expect(next.types.at(-1)).toBe('done');
    expect(sandbox()?.commands ?? []).toEqual([]);
  });

  it('survives a restart: the next process leaves it paused and resumes it when asked', async () => {
    await start([{ toolCalls: [WRITE] }]);
    const { runId, lastId } = await pause();
    await rt.runs.shutdown(100);
    model.push({ text: 'Done after restart.' });
    const next = anotherManager(rt, model);
    others.push(next);
    const report = await next.recover();
    expect(report.resumed).toEqual([]);
    expect(report.interrupted).toEqual([]);
    expect((await rt.storage.runs.get(runId))?.status).toBe('requires_action');
    await next.resume(session.id, runId, [{ tool_call_id: 'w1', type: 'approve' }], {});
    const after = await follow(next, runId, lastId);
    expect(types(after).at(-1)).toBe('done');
    expect(sandbox()?.files.get('a.txt')).toBe('A');
  });

  it('pauses on a client tool call and takes the client result (respond), after a restart too', async () => {
    const lookup = { name: 'get_weather', args: { city: 'Oslo' }, id: 'c1' };
    await start([{ toolCalls: [lookup] }]);
    const weather = {
      name: 'get_weather',
      description: 'Asks the browser',
      parameters: { type: 'object', properties: { city: { type: 'string' } } },
    };
    const { run } = await rt.runs.scheduler.send({
      sessionId: session.id,
      scope: {},
      content: 'weather?',
      clientTools: [weather],
    });
    const events = await collect(await rt.runs.events(session.id, {}, { runId: run.id }));
    expect(events.at(-1)?.event).toMatchObject({
      type: 'interrupt',
      tool_calls: [{ id: 'c1', name: 'get_weather', allowed: ['respond'] }],
    });
    expect(model.calls[0]?.tools).toContain('get_weather');
    // Only `respond` answers a client tool's call.
    await expect(
      rt.runs.resume(session.id, run.id, [{ tool_call_id: 'c1', type: 'approve' }], {}),
    ).rejects.toMatchObject({ code: 'VALIDATION_ERROR' });
    await rt.runs.shutdown(100);
    model.push({ text: 'Snowing, says the browser.' });
    const next = anotherManager(rt, model);
    others.push(next);
    await next.recover();
    await next.resume(
      session.id,
      run.id,
      [{ tool_call_id: 'c1', type: 'respond', output: 'snow' }],
      {},
    );
    const after = await follow(next, run.id, events.at(-1)?.id ?? '');
    expect(after.flatMap((e) => (e.event.type === 'tool_result' ? [e.event] : []))).toEqual([
      { type: 'tool_result', tool_call_id: 'c1', output: 'snow', exit_code: 0 },
    ]);
    expect(types(after).at(-1)).toBe('done');
    // The resumed run (another process) offered the client tool again, with its result.
    expect(model.calls[1]?.tools).toContain('get_weather');
    expect(model.calls[1]?.messages.filter(isToolMessage).map((m) => m.content)).toEqual(['snow']);
  });

  it('gives a paused run whose interrupt event was lost its interrupt when it is read', async () => {
    await start([{ toolCalls: [WRITE] }]);
    const { runId } = await pause();
    // The next process with an in-memory log: nothing of the run's stream survived.
    const next = anotherManager(rt, model, { eventLog: new InMemoryEventLog({ bufferSize: 100 }) });
    others.push(next);
    const replay = await collect(await next.events(session.id, {}, { runId }));
    expect(replay.map((e) => e.event)).toEqual([
      expect.objectContaining({ type: 'interrupt', run_id: runId }),
    ]);
  });
});
