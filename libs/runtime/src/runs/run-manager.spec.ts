import type { AgentEventEnvelope } from '@cognition/contracts';
import { AgentEventEnvelopeSchema } from '@cognition/contracts';
import { mkdir, stat, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { isToolMessage } from '@langchain/core/messages';
import type { TestRuntime } from '../testing/test-runtime';
import {
  collect,
  createTestRuntime,
  match,
  sendAndCollect,
  waitFor,
} from '../testing/test-runtime';
import { hangingCommand } from '../testing/fake-execution-backend';
import { ScriptedChatModel } from '../testing/scripted-chat-model';

function ofType<T extends AgentEventEnvelope['event']['type']>(
  events: AgentEventEnvelope[],
  type: T,
) {
  return events
    .map((e) => e.event)
    .filter((e): e is Extract<AgentEventEnvelope['event'], { type: T }> => e.type === type);
}

describe('RunManager (scripted model)', () => {
  let rt: TestRuntime;
  afterEach(async () => {
    await rt.cleanup();
  });

  it('runs a tool loop and streams ordered, schema-valid events ending with done', async () => {
    const model = new ScriptedChatModel([
      {
        text: ['Let me ', 'look.'],
        toolCalls: [{ name: 'write_file', args: { path: 'a.txt', content: 'hi' }, id: 'c1' }],
      },
      { text: 'Wrote it.', usage: { input_tokens: 100, output_tokens: 20 } },
    ]);
    rt = await createTestRuntime({ chatModel: model });
    const session = await rt.createSession();
    const { run, message, events, types } = await sendAndCollect(rt, session, 'write a file');

    expect(types).toEqual([
      'status',
      'token',
      'token',
      'tool_call',
      'tool_result',
      'token',
      'usage',
      'status',
      'done',
    ]);
    for (const e of events) expect(AgentEventEnvelopeSchema.parse(e)).toEqual(e);
    const ids = events.map((e) => e.id);
    expect([...ids].sort()).toEqual(ids);
    expect(new Set(ids).size).toBe(ids.length);
    expect(ofType(events, 'tool_result')[0]).toEqual({
      type: 'tool_result',
      tool_call_id: 'c1',
      output: 'Wrote 2 characters to a.txt',
      exit_code: 0,
    });
    expect(rt.sandbox.backends.get(session.id)?.files.get('a.txt')).toBe('hi');

    const done = ofType(events, 'done')[0];
    expect(done?.assistant_data?.content).toBe('Wrote it.');
    expect(done?.assistant_data?.parent_id).toBe(message.id);

    const stored = await rt.storage.runs.get(run.id);
    expect(stored?.status).toBe('completed');
    expect(stored?.usage?.estimated).toBe(true); // first call reported nothing
    const rows = await rt.storage.messages.listAll(session.id, {});
    expect(rows.map((r) => r.role)).toEqual(['user', 'assistant', 'tool', 'assistant']);
    expect(rows[0]?.id).toBe(message.id);
    expect(rows[1]?.toolCalls).toEqual([
      { id: 'c1', name: 'write_file', args: { path: 'a.txt', content: 'hi' } },
    ]);
    expect(rows.slice(1).every((r) => r.parentId === message.id)).toBe(true);
    // The system prompt is sent on every call but never stored.
    expect(model.calls[1]?.messages[0]?.getType()).toBe('system');
    expect(model.calls[1]?.messages.some(isToolMessage)).toBe(true);
  });

  it('emits planning and step_complete from write_todos and keeps the plan across turns', async () => {
    const todos = [
      { content: 'read', status: 'completed' },
      { content: 'write', status: 'pending' },
    ];
    const model = new ScriptedChatModel([
      { toolCalls: [{ name: 'write_todos', args: { todos }, id: 't1' }] },
      { text: 'planned' },
      {
        toolCalls: [
          {
            name: 'write_todos',
            args: { todos: todos.map((t) => ({ ...t, status: 'completed' })) },
            id: 't2',
          },
        ],
      },
      { text: 'all done' },
    ]);
    rt = await createTestRuntime({ chatModel: model });
    const session = await rt.createSession();
    const first = await sendAndCollect(rt, session, 'plan');
    expect(ofType(first.events, 'planning')[0]?.todos).toEqual(todos);
    expect(ofType(first.events, 'step_complete')).toEqual([
      { type: 'step_complete', step_number: 1, total_steps: 2, description: 'read' },
    ]);
    const second = await sendAndCollect(rt, session, 'finish');
    // Only the newly completed step: the plan of turn one came back from the checkpoint.
    expect(ofType(second.events, 'step_complete')).toEqual([
      { type: 'step_complete', step_number: 2, total_steps: 2, description: 'write' },
    ]);
  });

  it('turns tool failures into tool results the model sees, never a crashed run', async () => {
    const model = new ScriptedChatModel([
      {
        toolCalls: [
          { name: 'read_file', args: { path: 'missing.txt' }, id: 'r1' },
          { name: 'read_file', args: { nope: 1 }, id: 'r2' },
          { name: 'no_such_tool', args: {}, id: 'r3' },
        ],
      },
      { text: 'recovered' },
    ]);
    rt = await createTestRuntime({ chatModel: model });
    const session = await rt.createSession();
    const { events } = await sendAndCollect(rt, session, 'go');
    const results = ofType(events, 'tool_result');
    expect(results.map((r) => r.exit_code)).toEqual([1, 2, 127]);
    expect(results[0]?.output).toContain('no such file');
    expect(results[1]?.output).toContain('Invalid arguments for read_file');
    expect(results[2]?.output).toContain('not available to agent "default"');
    expect(events[events.length - 1]?.event.type).toBe('done');
  });

  it('rejects a concurrent send with RUN_IN_PROGRESS and replays an idempotency key', async () => {
    const model = new ScriptedChatModel([{ text: 'slow', hang: true }]);
    rt = await createTestRuntime({ chatModel: model });
    const session = await rt.createSession();
    const first = await rt.runs.scheduler.send({
      sessionId: session.id,
      scope: {},
      content: 'one',
      idempotencyKey: 'k1',
    });
    await expect(
      rt.runs.scheduler.send({ sessionId: session.id, scope: {}, content: 'two' }),
    ).rejects.toMatchObject({
      code: 'RUN_IN_PROGRESS',
    });
    const replay = await rt.runs.scheduler.send({
      sessionId: session.id,
      scope: {},
      content: 'one',
      idempotencyKey: 'k1',
    });
    expect(replay.created).toBe(false);
    expect(replay.run.id).toBe(first.run.id);
    expect(replay.message.id).toBe(first.message.id);
    expect((await rt.storage.messages.listAll(session.id, {})).length).toBe(1);
    await rt.runs.abort(session.id, {});
  });

  it('runs at most maxConcurrentRuns at once: the rest wait queued, in order, and abort cleanly', async () => {
    const model = new ScriptedChatModel([{ text: 'slow', hang: true }, { text: 'second' }]);
    rt = await createTestRuntime({ chatModel: model, extra: { maxConcurrentRuns: 1 } });
    const [a, b, c] = [
      await rt.createSession(),
      await rt.createSession(),
      await rt.createSession(),
    ];
    const first = await rt.runs.scheduler.send({ sessionId: a.id, scope: {}, content: 'a' });
    await waitFor(() => model.calls.length === 1);
    const second = await rt.runs.scheduler.send({ sessionId: b.id, scope: {}, content: 'b' });
    const third = await rt.runs.scheduler.send({ sessionId: c.id, scope: {}, content: 'c' });
    await new Promise((resolve) => setTimeout(resolve, 50));
    const status = async (id: string) => (await rt.storage.runs.get(id))?.status;
    expect([
      await status(first.run.id),
      await status(second.run.id),
      await status(third.run.id),
    ]).toEqual(['running', 'queued', 'queued']);
    expect(model.calls).toHaveLength(1);
    expect(rt.runs.admission()).toEqual({ executing: 1, queued: 2, limit: 1 });
    // A queued run aborts without ever starting; its user message stays.
    await rt.runs.abort(c.id, {});
    const thirdEvents = await collect(await rt.runs.events(c.id, {}, { runId: third.run.id }));
    expect(thirdEvents.map((e) => e.event.type)).toEqual(['status', 'error']);
    expect(await status(third.run.id)).toBe('aborted');
    expect((await rt.storage.messages.listAll(c.id, {})).map((m) => m.content)).toEqual(['c']);
    // The slot passes to the next queued run when the running one ends.
    await rt.runs.abort(a.id, {});
    const secondEvents = await collect(await rt.runs.events(b.id, {}, { runId: second.run.id }));
    expect(secondEvents[secondEvents.length - 1]?.event.type).toBe('done');
    expect(model.calls).toHaveLength(2);
    await waitFor(() => rt.runs.admission().executing === 0);
    expect(rt.runs.admission()).toEqual({ executing: 0, queued: 0, limit: 1 });
  });

  it('lets exactly one of two concurrent sends start a run, without an orphan message', async () => {
    const model = new ScriptedChatModel([{ text: 'slow', hang: true }]);
    rt = await createTestRuntime({ chatModel: model });
    const session = await rt.createSession();
    const results = await Promise.allSettled([
      rt.runs.scheduler.send({ sessionId: session.id, scope: {}, content: 'a' }),
      rt.runs.scheduler.send({ sessionId: session.id, scope: {}, content: 'b' }),
    ]);
    expect(results.map((r) => r.status).sort()).toEqual(['fulfilled', 'rejected']);
    const rejected = results.find((r) => r.status === 'rejected');
    expect(rejected?.status === 'rejected' && rejected.reason).toMatchObject({
      code: 'RUN_IN_PROGRESS',
    });
    expect((await rt.storage.messages.listAll(session.id, {})).map((m) => m.content)).toEqual([
      'a',
    ]);
    await rt.runs.abort(session.id, {});
  });

  it("removes a forgotten session's workspace directory, and only that one", async () => {
    rt = await createTestRuntime({ chatModel: new ScriptedChatModel([{ text: 'ok' }]) });
    const session = await rt.createSession();
    const other = await rt.createSession();
    await sendAndCollect(rt, session, 'hi');
    const own = join(rt.workspace, session.id);
    await writeFile(join(own, 'notes.md'), 'kept by the agent');
    await mkdir(join(rt.workspace, other.id), { recursive: true });
    await rt.runs.forgetSession(session.id);
    await expect(stat(own)).rejects.toMatchObject({ code: 'ENOENT' });
    expect((await stat(join(rt.workspace, other.id))).isDirectory()).toBe(true);
    // An id that is not a plain path segment names no directory: nothing outside is touched.
    await rt.runs.forgetSession('..');
    expect((await stat(rt.workspace)).isDirectory()).toBe(true);
  });

  it('aborts a running tool within a second and records the run as aborted', async () => {
    let started = false;
    const model = new ScriptedChatModel([
      {
        text: 'Running it.',
        toolCalls: [{ name: 'execute', args: { command: 'sleep 100' }, id: 'x1' }],
      },
    ]);
    rt = await createTestRuntime({
      chatModel: model,
      onExecute: hangingCommand(() => (started = true)),
    });
    const session = await rt.createSession();
    const { run } = await rt.runs.scheduler.send({
      sessionId: session.id,
      scope: {},
      content: 'run it',
    });
    const stream = await rt.runs.events(session.id, {}, { runId: run.id });
    await waitFor(() => started);
    const t0 = Date.now();
    const result = await rt.runs.abort(session.id, {});
    expect(Date.now() - t0).toBeLessThan(1000);
    expect(result.aborted).toBe(true);
    expect(result.run?.status).toBe('aborted');
    const events = await collect(stream);
    const last = events[events.length - 1]?.event;
    expect(last).toEqual({ type: 'error', code: 'ABORTED', message: 'The run was aborted' });
    expect(events.filter((e) => e.event.type === 'error' || e.event.type === 'done')).toHaveLength(
      1,
    );
    expect(ofType(events, 'tool_result')[0]?.exit_code).toBe(130);
    const rows = await rt.storage.messages.listAll(session.id, {});
    expect(rows.map((r) => r.role)).toEqual(['user', 'assistant', 'tool']);
    expect((await rt.storage.sessions.get(session.id, {}))?.status).toBe('active');
  });

  it('fails at once with PROVIDER_CONFIG_ERROR when no provider is configured', async () => {
    rt = await createTestRuntime({ providers: { providers: [] } });
    const session = await rt.createSession();
    const { run, events } = await sendAndCollect(rt, session, 'hello');
    const last = events[events.length - 1]?.event;
    expect(last?.type).toBe('error');
    expect(last).toMatchObject({ code: 'PROVIDER_CONFIG_ERROR' });
    expect(last?.type === 'error' && last.message).toContain('COGNITION_LLM_PROVIDER');
    expect((await rt.storage.runs.get(run.id))?.status).toBe('failed');
    expect((await rt.storage.sessions.get(session.id, {}))?.status).toBe('error');
  });

  it('returns a session from error to active after a successful run', async () => {
    const model = new ScriptedChatModel([{ error: new Error('boom') }, { text: 'fine' }]);
    rt = await createTestRuntime({ chatModel: model });
    const session = await rt.createSession();
    const failed = await sendAndCollect(rt, session, 'one');
    expect(failed.events[failed.events.length - 1]?.event).toMatchObject({
      type: 'error',
      code: 'PROVIDER_ERROR',
    });
    expect((await rt.storage.sessions.get(session.id, {}))?.status).toBe('error');
    await sendAndCollect(rt, session, 'two');
    expect((await rt.storage.sessions.get(session.id, {}))?.status).toBe('active');
    // The failed turn's user message stays in the history the next call sees.
    expect(model.calls[1]?.messages.map((m) => m.content)).toEqual([
      match.anyString(),
      'one',
      'two',
    ]);
  });

  it('resumes after lastEventId with exactly the missed events, and says when some were lost', async () => {
    const model = new ScriptedChatModel([{ text: ['a', 'b', 'c', 'd', 'e', 'f'] }]);
    rt = await createTestRuntime({ chatModel: model, bufferSize: 6 });
    const session = await rt.createSession();
    const { events } = await sendAndCollect(rt, session, 'x');
    expect(events).toHaveLength(10); // status, 6 tokens, usage, status, done
    // The buffer now holds the last six events (4..9).
    const cut = events[5];
    const resumed = await collect(await rt.runs.events(session.id, {}, { lastEventId: cut?.id }));
    expect(resumed[0]?.event).toEqual({
      type: 'reconnected',
      last_event_id: cut?.id,
      truncated: false,
    });
    expect(resumed.slice(1)).toEqual(events.slice(6));
    const lossy = await collect(
      await rt.runs.events(session.id, {}, { lastEventId: events[1]?.id }),
    );
    expect(lossy[0]?.event).toMatchObject({ type: 'reconnected', truncated: true });
    expect(lossy.slice(1)).toEqual(events.slice(4));
  });

  it('follows a live run from a reconnect made mid-stream, without loss or duplicates', async () => {
    const model = new ScriptedChatModel([
      { text: Array.from({ length: 20 }, (_, i) => `t${i} `), delayMs: 5 },
    ]);
    rt = await createTestRuntime({ chatModel: model });
    const session = await rt.createSession();
    const { run } = await rt.runs.scheduler.send({
      sessionId: session.id,
      scope: {},
      content: 'x',
    });
    const firstPart: AgentEventEnvelope[] = [];
    const controller = new AbortController();
    for await (const e of await rt.runs.events(session.id, {}, { signal: controller.signal })) {
      firstPart.push(e);
      if (firstPart.length === 5) controller.abort();
    }
    expect(firstPart).toHaveLength(5);
    const rest = await collect(
      await rt.runs.events(session.id, {}, { lastEventId: firstPart[4]?.id }),
    );
    const all = await collect(await rt.runs.events(session.id, {}, { runId: run.id }));
    expect([...firstPart, ...rest.slice(1)]).toEqual(all);
    expect(all[all.length - 1]?.event.type).toBe('done');
  });

  it('gives later runs event ids that sort after earlier ones', async () => {
    const model = new ScriptedChatModel([{ text: 'one' }, { text: 'two' }]);
    rt = await createTestRuntime({ chatModel: model });
    const session = await rt.createSession();
    const a = await sendAndCollect(rt, session, 'a');
    const b = await sendAndCollect(rt, session, 'b');
    expect((a.events[a.events.length - 1]?.id ?? 'z') < (b.events[0]?.id ?? '')).toBe(true);
    // A session-wide stream without a cursor follows the latest run only.
    const latest = await collect(await rt.runs.events(session.id, {}));
    expect(latest).toEqual(b.events);
  });

  it('rejects bad input with typed errors naming the field', async () => {
    rt = await createTestRuntime({ chatModel: new ScriptedChatModel() });
    const session = await rt.createSession();
    await expect(
      rt.runs.scheduler.send({
        sessionId: session.id,
        scope: {},
        content: 'x',
        callbackUrl: 'ftp://example.com/cb',
      }),
    ).rejects.toMatchObject({ code: 'VALIDATION_ERROR', issues: [{ path: 'callbackUrl' }] });
    // Callbacks into the server's own network are refused before anything is stored.
    for (const callbackUrl of [
      'http://127.0.0.1:8080/hook',
      'http://169.254.169.254/',
      'http://[::1]/',
    ]) {
      await expect(
        rt.runs.scheduler.send({ sessionId: session.id, scope: {}, content: 'x', callbackUrl }),
      ).rejects.toMatchObject({
        code: 'VALIDATION_ERROR',
        issues: [
          { path: 'callbackUrl', message: expect.stringContaining('non-public address') as string },
        ],
      });
    }
    expect(await rt.storage.messages.listAll(session.id, {})).toEqual([]);
    await expect(
      rt.runs.scheduler.send({ sessionId: session.id, scope: {}, content: '' }),
    ).rejects.toMatchObject({
      code: 'VALIDATION_ERROR',
      issues: [{ path: 'content' }],
    });
    await expect(
      rt.runs.scheduler.send({ sessionId: session.id, scope: {}, content: 'x', parentId: 'nope' }),
    ).rejects.toMatchObject({ code: 'VALIDATION_ERROR', issues: [{ path: 'parentId' }] });
    await expect(
      rt.runs.scheduler.send({ sessionId: session.id, scope: { user: 'eve' }, content: 'x' }),
    ).rejects.toMatchObject({
      code: 'SESSION_NOT_FOUND',
    });
    await expect(rt.runs.events(session.id, {}, { lastEventId: 'garbage' })).rejects.toMatchObject({
      code: 'VALIDATION_ERROR',
    });
    await expect(rt.runs.events(session.id, {}, { runId: 'run_missing' })).rejects.toMatchObject({
      code: 'RUN_NOT_FOUND',
    });
    await expect(rt.runs.validateSessionInput({ agentName: 'ghost' })).rejects.toMatchObject({
      code: 'VALIDATION_ERROR',
      issues: [match.objectContaining({ path: 'agentName' })],
    });
    await expect(
      rt.runs.validateSessionInput({ config: { model: 'gpt-unknown' } }),
    ).rejects.toMatchObject({ issues: [match.objectContaining({ path: 'config.model' })] });
  });

  it('delegates to a subagent with the task tool and emits a delegation event', async () => {
    const model = new ScriptedChatModel([
      {
        toolCalls: [
          { name: 'task', args: { agent: 'researcher', description: 'find X' }, id: 'd1' },
        ],
      },
      // The subagent's own call: it was offered no task tool.
      (call) => ({ text: `sub saw ${call.tools.includes('task') ? 'task' : 'no task'}` }),
      { text: 'final' },
    ]);
    rt = await createTestRuntime({
      chatModel: model,
      agents: [
        {
          name: 'researcher',
          description: 'Finds things',
          mode: 'subagent',
          tools: ['read_file', 'task'],
          model: null,
          temperature: null,
          systemPrompt: 'You research.',
          interruptOn: {},
          mcpServers: [],
          skills: null,
          source: '/tmp/researcher.md',
        },
      ],
    });
    const session = await rt.createSession();
    const { events } = await sendAndCollect(rt, session, 'delegate');
    expect(ofType(events, 'delegation')).toEqual([
      { type: 'delegation', target_agent: 'researcher', task: 'find X' },
    ]);
    expect(ofType(events, 'tool_result')[0]?.output).toBe('sub saw no task');
    expect(model.calls[0]?.tools).toContain('task');
    expect(model.calls[1]?.messages.map((m) => m.content)).toEqual(['You research.', 'find X']);
    // Subagent tokens stay out of the session's stream.
    expect(ofType(events, 'token').map((t) => t.content)).toEqual(['final']);
  });

  it('marks runs left active by a dead process interrupted, with a terminal event', async () => {
    rt = await createTestRuntime({
      chatModel: new ScriptedChatModel(),
      extra: { recovery: 'interrupt' },
    });
    const session = await rt.createSession();
    const message = await rt.storage.messages.create({
      sessionId: session.id,
      role: 'user',
      content: 'x',
    });
    const { run } = await rt.storage.runs.create({
      sessionId: session.id,
      status: 'running',
      inputMessageId: message.id,
      id: 'run_orphan',
    });
    const recovered = await rt.runs.recover();
    expect(recovered.interrupted.map((r) => [r.id, r.status])).toEqual([[run.id, 'interrupted']]);
    const events = await collect(await rt.runs.events(session.id, {}, { runId: run.id }));
    expect(events.map((e) => e.event)).toEqual([
      {
        type: 'error',
        code: 'UNAVAILABLE',
        message: 'The server stopped while the run was active',
      },
    ]);
    // A client that saw events before the restart still receives it.
    const resumed = await collect(
      await rt.runs.events(session.id, {}, { lastEventId: `${run.id}:000000042` }),
    );
    expect(resumed.map((e) => e.event.type)).toEqual(['reconnected', 'error']);
  });

  it('answers tool calls left dangling by a crash before the next model call', async () => {
    const model = new ScriptedChatModel([
      { text: 'again', toolCalls: [{ name: 'execute', args: { command: 'x' }, id: 'dangling' }] },
      { text: 'ok' },
    ]);
    rt = await createTestRuntime({ chatModel: model, onExecute: hangingCommand() });
    const session = await rt.createSession();
    await rt.runs.scheduler.send({ sessionId: session.id, scope: {}, content: 'one' });
    await waitFor(() => (rt.sandbox.backends.get(session.id)?.commands.length ?? 0) > 0);
    // Simulate a crash mid-tool: a second manager on the same storage recovers.
    const { RunManager } = await import('./run-manager');
    const other = new RunManager({
      storage: rt.storage,
      sandbox: rt.sandbox,
      agents: rt.agents,
      providers: rt.providers,
      eventLog: rt.log,
      workspaceRoot: rt.workspace,
      chatModelFactory: () => model,
      recovery: 'interrupt',
    });
    expect((await other.recover()).interrupted.length).toBe(1);
    model.push({ text: 'recovered' });
    const result = await other.scheduler.send({ sessionId: session.id, scope: {}, content: 'two' });
    const events = await collect(await other.events(session.id, {}, { runId: result.run.id }));
    expect(events[events.length - 1]?.event.type).toBe('done');
    const last = model.calls[model.calls.length - 1];
    const toolMessages = last?.messages.filter(isToolMessage) ?? [];
    expect(toolMessages.map((m) => m.tool_call_id)).toEqual(['dangling']);
    await other.shutdown(100);
  });
});
