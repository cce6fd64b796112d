import { mkdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { Client } from '@langchain/langgraph-sdk';
import { eventually } from './testing/agent-server';
import { postgresServerDatabase, sqliteServerDatabase } from './testing/postgres';
import { startServerProcess } from './testing/server-process';
import { GRAPHS_DIR, langGraphServerForSpec, sdkFailure } from './testing/langgraph-sdk';

/**
 * The LangGraph API (issue 28, first slice) driven by the official SDK's `Client` against the
 * built server, on SQLite and PostgreSQL: system assistants of a langgraph.json graph and of our
 * agents, threads that are sessions (seen from REST too), tenancy, bad input, start-up errors.
 */
const ALICE = 'e2e-langgraph-alice-0123456789';
const BOB = 'e2e-langgraph-bob-0123456789';

describe.each([
  ['SQLite', () => sqliteServerDatabase('cognition-e2e-langgraph-')],
  ['PostgreSQL', postgresServerDatabase],
])('LangGraph API with the official SDK on %s (issue 28)', (_name, createDatabase) => {
  const lg = langGraphServerForSpec(
    { alice: ALICE, bob: BOB },
    createDatabase,
    'cognition-e2e-langgraph-ws-',
    {
      echoModel: true,
      // An agent that asks a person before it runs a command (human in the loop).
      prepare: (workspace) => {
        mkdirSync(path.join(workspace, '.cognition', 'agents'), { recursive: true });
        writeFileSync(
          path.join(workspace, '.cognition', 'agents', 'careful.md'),
          '---\ndescription: Asks first.\ntools: [execute]\ninterrupt_on:\n  execute: { allowed: [approve, reject] }\n---\nYou run commands.\n',
        );
      },
    },
  );

  const human = (content: string) => ({ messages: [{ type: 'human', content }] });
  type WireMessage = { type: string; content: unknown };
  const lastMessage = (values: unknown) =>
    ((values as { messages?: WireMessage[] }).messages ?? []).at(-1);

  it('runs an agent assistant: wait answers the thread values, the run is ours (REST sees it)', async () => {
    const thread = await lg.alice.threads.create({ graphId: 'agent:default' });
    const values = await lg.alice.runs.wait(thread.thread_id, 'agent:default', {
      input: human('hello'),
    });
    expect(lastMessage(values)).toMatchObject({ type: 'ai', content: 'You said: hello' });
    const runs = await lg.alice.runs.list(thread.thread_id);
    expect(runs).toHaveLength(1);
    expect(runs[0]).toMatchObject({ thread_id: thread.thread_id, status: 'success' });
    expect(await lg.alice.runs.get(thread.thread_id, runs[0]?.run_id ?? '')).toMatchObject({
      status: 'success',
    });
    // The same run and messages over REST.
    const rest = await fetch(`${lg.server.url}/sessions/${thread.thread_id}/runs`, {
      headers: { authorization: `Bearer ${ALICE}` },
    });
    expect(JSON.stringify(await rest.json())).toContain(runs[0]?.run_id ?? 'missing');
    expect((await lg.alice.threads.get(thread.thread_id)).status).toBe('idle');
  });

  it('streams a run: metadata, token tuples with event ids, the final values; Content-Location names the run', async () => {
    const thread = await lg.alice.threads.create();
    let created: { run_id: string; thread_id?: string } | undefined;
    const parts: { event: string; data: unknown; id?: string }[] = [];
    for await (const part of lg.alice.runs.stream(thread.thread_id, 'agent:default', {
      input: human('stream me'),
      streamMode: ['values', 'messages-tuple'],
      onRunCreated: (meta) => {
        created = meta;
      },
    })) {
      parts.push(part);
    }
    expect(created?.thread_id).toBe(thread.thread_id);
    expect(parts[0]).toEqual({ event: 'metadata', data: { run_id: created?.run_id, attempt: 1 } });
    const tokens = parts.filter((p) => p.event === 'messages');
    expect(tokens.map((p) => (p.data as [{ content: string }])[0].content).join('')).toBe(
      'You said: stream me',
    );
    expect(tokens.every((p) => p.id?.startsWith(`${created?.run_id}:`))).toBe(true);
    const last = parts.at(-1);
    expect(last?.event).toBe('values');
    expect(lastMessage(last?.data)).toMatchObject({ type: 'ai', content: 'You said: stream me' });

    // Joining the finished run after its second token replays the rest, same ids.
    const after = tokens[1]?.id ?? '';
    const replay: { event: string; id?: string }[] = [];
    for await (const part of lg.alice.runs.joinStream(thread.thread_id, created?.run_id ?? '', {
      lastEventId: after,
      streamMode: ['messages-tuple'],
    })) {
      replay.push(part);
    }
    expect(replay.map((p) => p.id)).toEqual(tokens.slice(2).map((p) => p.id));
  });

  it('a background run: create, join; a busy thread refuses another run under reject (409); cancel interrupts', async () => {
    const thread = await lg.alice.threads.create();
    const requestsBefore = lg.model.requests.length;
    lg.model.enqueue({
      text: ['slow ', 'answer ', 'that ', 'takes ', 'a ', 'while'],
      chunkDelayMs: 300,
    });
    const run = await lg.alice.runs.create(thread.thread_id, 'agent:default', {
      input: human('take your time'),
    });
    expect(run).toMatchObject({ thread_id: thread.thread_id });
    expect(['pending', 'running']).toContain(run.status);
    const busy = await sdkFailure(
      lg.alice.runs.create(thread.thread_id, 'agent:default', {
        input: human('me too'),
        multitaskStrategy: 'reject',
      }),
    );
    expect(busy.status).toBe(409);
    expect((await lg.alice.threads.get(thread.thread_id)).status).toBe('busy');
    // Cancelled once its model call took the slow reply (else the next run would get it).
    await eventually(() => Promise.resolve(lg.model.requests.length > requestsBefore));
    await lg.alice.runs.cancel(thread.thread_id, run.run_id, true);
    expect((await lg.alice.runs.get(thread.thread_id, run.run_id)).status).toBe('interrupted');

    const second = await lg.alice.runs.create(thread.thread_id, 'agent:default', {
      input: human('again'),
    });
    const joined = await lg.alice.runs.join(thread.thread_id, second.run_id);
    expect(lastMessage(joined)).toMatchObject({ type: 'ai', content: 'You said: again' });
  });

  it('human in the loop: a pause is an interrupt of the stream and the thread; command.resume approves it', async () => {
    const thread = await lg.alice.threads.create({ graphId: 'agent:careful' });
    lg.model.enqueue({
      toolCalls: [{ id: 'call_1', name: 'execute', args: { command: 'echo approved' } }],
    });
    const paused: { event: string; data: unknown }[] = [];
    let runId = '';
    for await (const part of lg.alice.runs.stream(thread.thread_id, 'agent:careful', {
      input: human('run it'),
      streamMode: ['updates', 'values'],
      onRunCreated: (meta) => {
        runId = meta.run_id;
      },
    })) {
      paused.push(part);
    }
    const interrupt = paused.find((p) => p.event === 'updates');
    expect(interrupt?.data).toMatchObject({
      __interrupt__: [{ value: { tool_calls: [{ id: 'call_1', name: 'execute' }] } }],
    });
    const waiting = await lg.alice.threads.get(thread.thread_id);
    expect(waiting.status).toBe('interrupted');
    expect(Object.keys(waiting.interrupts)).toEqual([runId]);
    // The thread's head shows the pause as LangGraph shows one: the step to run next, and a
    // task with the thread's interrupt (what useStream reads after a reload); so does history.
    const state = await lg.alice.threads.getState(thread.thread_id);
    expect(state.next).toEqual(['tools']);
    expect(state.tasks).toEqual([
      expect.objectContaining({ id: runId, name: 'tools', interrupts: waiting.interrupts[runId] }),
    ]);
    expect((state as typeof state & { interrupts: unknown }).interrupts).toEqual(
      waiting.interrupts[runId],
    );
    const [head] = await lg.alice.threads.getHistory(thread.thread_id, { limit: 1 });
    expect(head).toEqual(state);

    // Approved the way LangChain's middleware takes decisions: in order, no call ids.
    const resumed: { event: string; data: unknown }[] = [];
    for await (const part of lg.alice.runs.stream(thread.thread_id, 'agent:careful', {
      command: { resume: { decisions: [{ type: 'approve' }] } },
      streamMode: ['custom', 'values'],
    })) {
      resumed.push(part);
    }
    expect(resumed[0]).toEqual({ event: 'metadata', data: { run_id: runId, attempt: 1 } });
    const result = resumed.find(
      (p) => p.event === 'custom' && (p.data as { type: string }).type === 'tool_result',
    );
    expect(result?.data).toMatchObject({ tool_call_id: 'call_1', exit_code: 0 });
    expect(String((result?.data as { output: string }).output)).toContain('approved');
    expect(lastMessage(resumed.at(-1)?.data)).toMatchObject({ type: 'ai' });
    expect((await lg.alice.threads.get(thread.thread_id)).status).toBe('idle');
    expect(await lg.alice.threads.getState(thread.thread_id)).toMatchObject({
      next: [],
      tasks: [],
      interrupts: [],
    });
    // Nothing left to decide.
    const again = await sdkFailure(
      lg.alice.runs.create(thread.thread_id, 'agent:careful', {
        command: { resume: { decisions: [{ type: 'approve' }] } },
      }),
    );
    expect(again).toEqual({
      status: 409,
      body: { detail: 'Thread has no run waiting for a decision' },
    });
    const badCommand = await sdkFailure(
      lg.alice.runs.create(thread.thread_id, 'agent:careful', { command: { goto: 'tools' } }),
    );
    expect(badCommand).toMatchObject({
      status: 422,
      body: {
        errors: expect.arrayContaining([
          { path: 'body.command.goto', message: 'not supported' },
        ]) as unknown,
      },
    });
  });

  it('run bad input: 422 naming the field; unknown thread, run and assistant 404; a user graph refuses an agent command', async () => {
    const thread = await lg.alice.threads.create();
    // Past the SDK's types, as a JavaScript caller could send it.
    const bogusModes: never = JSON.parse('["values", "bogus"]') as never;
    const badMode = await sdkFailure(
      lg.alice.runs.create(thread.thread_id, 'agent:default', {
        input: human('x'),
        streamMode: bogusModes,
      }),
    );
    expect(badMode).toMatchObject({
      status: 422,
      body: { errors: [{ path: 'body.stream_mode.1' }] },
    });
    const noHuman = await sdkFailure(
      lg.alice.runs.create(thread.thread_id, 'agent:default', { input: { messages: [] } }),
    );
    expect(noHuman).toMatchObject({
      status: 422,
      body: { errors: [{ path: 'body.input.messages' }] },
    });
    const unknownThread = await sdkFailure(
      lg.alice.runs.create('00000000-0000-4000-8000-000000000000', 'agent:default', {
        input: human('x'),
      }),
    );
    expect(unknownThread).toEqual({ status: 404, body: { detail: 'Thread not found' } });
    expect(await sdkFailure(lg.alice.runs.get(thread.thread_id, 'run_nope'))).toEqual({
      status: 404,
      body: { detail: 'Run not found' },
    });
    expect(
      await sdkFailure(lg.alice.runs.create(thread.thread_id, 'nope', { input: human('x') })),
    ).toEqual({ status: 404, body: { detail: 'Assistant not found' } });
    // A graph run's command takes `resume`, `update` and `goto`; anything else is refused.
    const unknownField: never = JSON.parse('{"resume": "x", "jump": "echo"}') as never;
    const graphRun = await sdkFailure(
      lg.alice.runs.create(thread.thread_id, 'echo', { command: unknownField }),
    );
    expect(graphRun).toMatchObject({
      status: 422,
      body: { errors: [{ path: 'body.command.jump', message: 'not supported' }] },
    });
    // Another tenant's thread: its runs are not found either.
    expect(await sdkFailure(lg.bob.runs.list(thread.thread_id))).toMatchObject({ status: 404 });
  });

  it('answers /ok and /info', async () => {
    expect(await (await fetch(`${lg.server.url}/ok`)).json()).toEqual({ ok: true });
    const info = (await (await fetch(`${lg.server.url}/info`)).json()) as Record<string, unknown>;
    expect(info['flags']).toMatchObject({ assistants: true, crons: true });
  });

  it('has one system assistant per graph of langgraph.json and per primary agent', async () => {
    const assistants = await lg.alice.assistants.search({ limit: 100 });
    const echo = assistants.find((a) => a.graph_id === 'echo');
    expect(echo).toMatchObject({ name: 'echo', metadata: { created_by: 'system' }, version: 1 });
    // The id langgraph dev gives the same graph: UUID v5 of the graph id in its namespace
    // (computed apart, with Python's uuid.uuid5).
    expect(echo?.assistant_id).toBe('046b5dc7-2108-582c-9c6c-31d556d138f0');
    expect(assistants.map((a) => a.graph_id)).toContain('agent:default');
    expect(await lg.alice.assistants.count({ graphId: 'echo' })).toBe(1);
    expect(await lg.alice.assistants.get('echo')).toEqual(echo);
    expect(await lg.alice.assistants.get(echo?.assistant_id ?? '')).toEqual(echo);
    const graph = await lg.alice.assistants.getGraph('echo');
    expect(graph.nodes.map((n) => n.id)).toEqual(['__start__', 'echo', '__end__']);
    expect(await sdkFailure(lg.alice.assistants.get('nope'))).toEqual({
      status: 404,
      body: { detail: 'Assistant not found' },
    });
  });

  it('threads are sessions: created, read, patched, searched, counted and deleted through the SDK, seen over REST', async () => {
    const thread = await lg.alice.threads.create({
      graphId: 'echo',
      metadata: { tag: 'sdk', n: 1, nested: { ok: true } },
    });
    expect(thread).toMatchObject({
      status: 'idle',
      metadata: { tag: 'sdk', n: 1, nested: { ok: true }, graph_id: 'echo' },
    });
    expect(await lg.alice.threads.get(thread.thread_id)).toEqual(thread);

    // The same session over REST, with the string value as is.
    const rest = await fetch(`${lg.server.url}/sessions/${thread.thread_id}`, {
      headers: { authorization: `Bearer ${ALICE}` },
    });
    expect(rest.status).toBe(200);
    expect(((await rest.json()) as { metadata: Record<string, string> }).metadata).toMatchObject({
      tag: 'sdk',
      graph_id: 'echo',
    });

    const patched = await lg.alice.threads.update(thread.thread_id, { metadata: { n: 2 } });
    expect(patched.metadata).toEqual({ tag: 'sdk', n: 2, nested: { ok: true }, graph_id: 'echo' });
    const found = await lg.alice.threads.search({ metadata: { n: 2 } });
    expect(found.map((t) => t.thread_id)).toEqual([thread.thread_id]);
    expect(await lg.alice.threads.count({ metadata: { tag: 'sdk' } })).toBe(1);
    expect(await lg.alice.threads.count({ status: 'idle' })).toBeGreaterThanOrEqual(1);

    const state = await lg.alice.threads.getState(thread.thread_id);
    expect(state).toMatchObject({ values: {}, next: [], checkpoint: null });
    expect(await lg.alice.threads.getHistory(thread.thread_id)).toEqual([]);

    await lg.alice.threads.delete(thread.thread_id);
    expect(await sdkFailure(lg.alice.threads.get(thread.thread_id))).toEqual({
      status: 404,
      body: { detail: 'Thread not found' },
    });
  });

  it('a session made over REST is a thread; a chosen thread id honours if_exists', async () => {
    const created = await fetch(`${lg.server.url}/sessions`, {
      method: 'POST',
      headers: { authorization: `Bearer ${ALICE}`, 'content-type': 'application/json' },
      body: JSON.stringify({ title: 'from REST', metadata: { origin: 'rest' } }),
    });
    expect(created.status).toBe(201);
    const session = (await created.json()) as { id: string };
    const thread = await lg.alice.threads.get(session.id);
    expect(thread).toMatchObject({ thread_id: session.id, metadata: { origin: 'rest' } });

    const again = await lg.alice.threads.create({ threadId: session.id, ifExists: 'do_nothing' });
    expect(again.thread_id).toBe(session.id);
    expect(await sdkFailure(lg.alice.threads.create({ threadId: session.id }))).toEqual({
      status: 409,
      body: { detail: 'Thread already exists' },
    });
  });

  it("another tenant's thread is not found", async () => {
    const thread = await lg.alice.threads.create({ metadata: { secret: 'alice' } });
    expect(await sdkFailure(lg.bob.threads.get(thread.thread_id))).toMatchObject({ status: 404 });
    expect(
      await sdkFailure(lg.bob.threads.update(thread.thread_id, { metadata: { x: 1 } })),
    ).toMatchObject({ status: 404 });
    expect(await sdkFailure(lg.bob.threads.delete(thread.thread_id))).toMatchObject({
      status: 404,
    });
    expect(await lg.bob.threads.search({ metadata: { secret: 'alice' } })).toEqual([]);
    expect(await lg.bob.threads.count({ metadata: { secret: 'alice' } })).toBe(0);
    // Without a key: 401.
    const anonymous = new Client({
      apiUrl: lg.server.url,
      apiKey: null,
      callerOptions: { maxRetries: 0 },
    });
    expect(await sdkFailure(anonymous.threads.get(thread.thread_id))).toMatchObject({
      status: 401,
    });
  });

  it('bad input: 422 naming the field, never a 500', async () => {
    const badId = await sdkFailure(lg.alice.threads.create({ threadId: 'not-a-uuid' }));
    expect(badId.status).toBe(422);
    expect(badId.body).toMatchObject({ errors: [{ path: 'body.thread_id' }] });
    const badLimit = await sdkFailure(lg.alice.threads.search({ limit: 0 }));
    expect(badLimit).toMatchObject({ status: 422, body: { errors: [{ path: 'body.limit' }] } });
    const badStatus = await sdkFailure(
      lg.alice.threads.count({ status: 'sleeping' as unknown as 'idle' }),
    );
    expect(badStatus).toMatchObject({ status: 422, body: { errors: [{ path: 'body.status' }] } });
    expect(await sdkFailure(lg.alice.threads.get('not-a-uuid'))).toMatchObject({ status: 404 });
    const superstep = await sdkFailure(lg.alice.threads.create({ supersteps: [{ updates: [] }] }));
    expect(superstep).toMatchObject({
      status: 422,
      body: { errors: [{ path: 'body.supersteps.0.updates' }] },
    });
  });
});

describe('langgraph.json start-up errors (issue 28)', () => {
  it('a graph whose export is missing stops the start, naming the file and the export', async () => {
    const error = await startServerProcess({
      COGNITION_LANGGRAPH_CONFIG: path.join(GRAPHS_DIR, 'broken.json'),
    }).then(
      async (server) => {
        await server.stop();
        return null;
      },
      (e: unknown) => e as Error,
    );
    // The start-up failure is logged as JSON: its message names the file, graph and export.
    const line = (error?.message ?? '').split('\n').find((l) => l.includes('failed to start'));
    const logged = JSON.parse(line ?? '{}') as { err?: { message?: string } };
    expect(logged.err?.message).toBe(
      `${path.join(GRAPHS_DIR, 'broken.json')}: graph "echo" (${path.join(GRAPHS_DIR, 'graphs.ts')}, ` +
        'export "missing"): no such export (the module exports: agent, approval, chain, echo, failing, greeter, nested, notes, runtime, steps, story)',
    );
  });
});
