import { mkdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import type { FakeOpenAIServer } from '@cognition/runtime/testing/http';
import { Client } from '@langchain/langgraph-sdk';
import { eventually, fakeProviderEnv } from './testing/agent-server';
import type { ServerDatabase } from './testing/postgres';
import { postgresServerDatabase, sqliteServerDatabase } from './testing/postgres';
import type { ServerProcess } from './testing/server-process';
import { startServerProcess, tempWorkspace } from './testing/server-process';
import {
  GRAPHS_DIR,
  sdkFailure,
  startEchoModel,
  startLangGraphServer,
} from './testing/langgraph-sdk';

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
  let database: ServerDatabase;
  let workspace: { dir: string; remove(): void };
  let server: ServerProcess;
  let alice: Client;
  let bob: Client;
  let fake: FakeOpenAIServer;

  beforeAll(async () => {
    fake = await startEchoModel();
    database = await createDatabase();
    workspace = tempWorkspace('cognition-e2e-langgraph-ws-');
    // An agent that asks a person before it runs a command (human in the loop).
    mkdirSync(path.join(workspace.dir, '.cognition', 'agents'), { recursive: true });
    writeFileSync(
      path.join(workspace.dir, '.cognition', 'agents', 'careful.md'),
      '---\ndescription: Asks first.\ntools: [execute]\ninterrupt_on:\n  execute: { allowed: [approve, reject] }\n---\nYou run commands.\n',
    );
    ({ server, alice, bob } = await startLangGraphServer(
      { alice: ALICE, bob: BOB },
      { ...database.env, ...fakeProviderEnv(fake), COGNITION_WORKSPACE_ROOT: workspace.dir },
    ));
  });

  afterAll(async () => {
    await server?.stop();
    await database?.drop();
    workspace?.remove();
    await fake?.close();
  });

  const human = (content: string) => ({ messages: [{ type: 'human', content }] });
  type WireMessage = { type: string; content: unknown };
  const lastMessage = (values: unknown) =>
    ((values as { messages?: WireMessage[] }).messages ?? []).at(-1);

  it('runs an agent assistant: wait answers the thread values, the run is ours (REST sees it)', async () => {
    const thread = await alice.threads.create({ graphId: 'agent:default' });
    const values = await alice.runs.wait(thread.thread_id, 'agent:default', {
      input: human('hello'),
    });
    expect(lastMessage(values)).toMatchObject({ type: 'ai', content: 'You said: hello' });
    const runs = await alice.runs.list(thread.thread_id);
    expect(runs).toHaveLength(1);
    expect(runs[0]).toMatchObject({ thread_id: thread.thread_id, status: 'success' });
    expect(await alice.runs.get(thread.thread_id, runs[0]?.run_id ?? '')).toMatchObject({
      status: 'success',
    });
    // The same run and messages over REST.
    const rest = await fetch(`${server.url}/sessions/${thread.thread_id}/runs`, {
      headers: { authorization: `Bearer ${ALICE}` },
    });
    expect(JSON.stringify(await rest.json())).toContain(runs[0]?.run_id ?? 'missing');
    expect((await alice.threads.get(thread.thread_id)).status).toBe('idle');
  });

  it('streams a run: metadata, token tuples with event ids, the final values; Content-Location names the run', async () => {
    const thread = await alice.threads.create();
    let created: { run_id: string; thread_id?: string } | undefined;
    const parts: { event: string; data: unknown; id?: string }[] = [];
    for await (const part of alice.runs.stream(thread.thread_id, 'agent:default', {
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
    for await (const part of alice.runs.joinStream(thread.thread_id, created?.run_id ?? '', {
      lastEventId: after,
      streamMode: ['messages-tuple'],
    })) {
      replay.push(part);
    }
    expect(replay.map((p) => p.id)).toEqual(tokens.slice(2).map((p) => p.id));
  });

  it('a background run: create, join; a busy thread refuses another run under reject (409); cancel interrupts', async () => {
    const thread = await alice.threads.create();
    const requestsBefore = fake.requests.length;
    fake.enqueue({
      text: ['slow ', 'answer ', 'that ', 'takes ', 'a ', 'while'],
      chunkDelayMs: 300,
    });
    const run = await alice.runs.create(thread.thread_id, 'agent:default', {
      input: human('take your time'),
    });
    expect(run).toMatchObject({ thread_id: thread.thread_id });
    expect(['pending', 'running']).toContain(run.status);
    const busy = await sdkFailure(
      alice.runs.create(thread.thread_id, 'agent:default', {
        input: human('me too'),
        multitaskStrategy: 'reject',
      }),
    );
    expect(busy.status).toBe(409);
    expect((await alice.threads.get(thread.thread_id)).status).toBe('busy');
    // Cancelled once its model call took the slow reply (else the next run would get it).
    await eventually(() => Promise.resolve(fake.requests.length > requestsBefore));
    await alice.runs.cancel(thread.thread_id, run.run_id, true);
    expect((await alice.runs.get(thread.thread_id, run.run_id)).status).toBe('interrupted');

    const second = await alice.runs.create(thread.thread_id, 'agent:default', {
      input: human('again'),
    });
    const joined = await alice.runs.join(thread.thread_id, second.run_id);
    expect(lastMessage(joined)).toMatchObject({ type: 'ai', content: 'You said: again' });
  });

  it('human in the loop: a pause is an interrupt of the stream and the thread; command.resume approves it', async () => {
    const thread = await alice.threads.create({ graphId: 'agent:careful' });
    fake.enqueue({
      toolCalls: [{ id: 'call_1', name: 'execute', args: { command: 'echo approved' } }],
    });
    const paused: { event: string; data: unknown }[] = [];
    let runId = '';
    for await (const part of alice.runs.stream(thread.thread_id, 'agent:careful', {
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
    const waiting = await alice.threads.get(thread.thread_id);
    expect(waiting.status).toBe('interrupted');
    expect(Object.keys(waiting.interrupts)).toEqual([runId]);
    // The thread's head shows the pause as LangGraph shows one: the step to run next, and a
    // task with the thread's interrupt (what useStream reads after a reload); so does history.
    const state = await alice.threads.getState(thread.thread_id);
    expect(state.next).toEqual(['tools']);
    expect(state.tasks).toEqual([
      expect.objectContaining({ id: runId, name: 'tools', interrupts: waiting.interrupts[runId] }),
    ]);
    expect((state as typeof state & { interrupts: unknown }).interrupts).toEqual(
      waiting.interrupts[runId],
    );
    const [head] = await alice.threads.getHistory(thread.thread_id, { limit: 1 });
    expect(head).toEqual(state);

    // Approved the way LangChain's middleware takes decisions: in order, no call ids.
    const resumed: { event: string; data: unknown }[] = [];
    for await (const part of alice.runs.stream(thread.thread_id, 'agent:careful', {
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
    expect((await alice.threads.get(thread.thread_id)).status).toBe('idle');
    expect(await alice.threads.getState(thread.thread_id)).toMatchObject({
      next: [],
      tasks: [],
      interrupts: [],
    });
    // Nothing left to decide.
    const again = await sdkFailure(
      alice.runs.create(thread.thread_id, 'agent:careful', {
        command: { resume: { decisions: [{ type: 'approve' }] } },
      }),
    );
    expect(again).toEqual({
      status: 409,
      body: { detail: 'Thread has no run waiting for a decision' },
    });
    const badCommand = await sdkFailure(
      alice.runs.create(thread.thread_id, 'agent:careful', { command: { goto: 'tools' } }),
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
    const thread = await alice.threads.create();
    // Past the SDK's types, as a JavaScript caller could send it.
    const bogusModes: never = JSON.parse('["values", "bogus"]') as never;
    const badMode = await sdkFailure(
      alice.runs.create(thread.thread_id, 'agent:default', {
        input: human('x'),
        streamMode: bogusModes,
      }),
    );
    expect(badMode).toMatchObject({
      status: 422,
      body: { errors: [{ path: 'body.stream_mode.1' }] },
    });
    const noHuman = await sdkFailure(
      alice.runs.create(thread.thread_id, 'agent:default', { input: { messages: [] } }),
    );
    expect(noHuman).toMatchObject({
      status: 422,
      body: { errors: [{ path: 'body.input.messages' }] },
    });
    const unknownThread = await sdkFailure(
      alice.runs.create('00000000-0000-4000-8000-000000000000', 'agent:default', {
        input: human('x'),
      }),
    );
    expect(unknownThread).toEqual({ status: 404, body: { detail: 'Thread not found' } });
    expect(await sdkFailure(alice.runs.get(thread.thread_id, 'run_nope'))).toEqual({
      status: 404,
      body: { detail: 'Run not found' },
    });
    expect(
      await sdkFailure(alice.runs.create(thread.thread_id, 'nope', { input: human('x') })),
    ).toEqual({ status: 404, body: { detail: 'Assistant not found' } });
    // A graph run's command takes `resume`, `update` and `goto`; anything else is refused.
    const unknownField: never = JSON.parse('{"resume": "x", "jump": "echo"}') as never;
    const graphRun = await sdkFailure(
      alice.runs.create(thread.thread_id, 'echo', { command: unknownField }),
    );
    expect(graphRun).toMatchObject({
      status: 422,
      body: { errors: [{ path: 'body.command.jump', message: 'not supported' }] },
    });
    // Another tenant's thread: its runs are not found either.
    expect(await sdkFailure(bob.runs.list(thread.thread_id))).toMatchObject({ status: 404 });
  });

  it('answers /ok and /info', async () => {
    expect(await (await fetch(`${server.url}/ok`)).json()).toEqual({ ok: true });
    const info = (await (await fetch(`${server.url}/info`)).json()) as Record<string, unknown>;
    expect(info['flags']).toMatchObject({ assistants: true, crons: true });
  });

  it('has one system assistant per graph of langgraph.json and per primary agent', async () => {
    const assistants = await alice.assistants.search({ limit: 100 });
    const echo = assistants.find((a) => a.graph_id === 'echo');
    expect(echo).toMatchObject({ name: 'echo', metadata: { created_by: 'system' }, version: 1 });
    // The id langgraph dev gives the same graph: UUID v5 of the graph id in its namespace
    // (computed apart, with Python's uuid.uuid5).
    expect(echo?.assistant_id).toBe('046b5dc7-2108-582c-9c6c-31d556d138f0');
    expect(assistants.map((a) => a.graph_id)).toContain('agent:default');
    expect(await alice.assistants.count({ graphId: 'echo' })).toBe(1);
    expect(await alice.assistants.get('echo')).toEqual(echo);
    expect(await alice.assistants.get(echo?.assistant_id ?? '')).toEqual(echo);
    const graph = await alice.assistants.getGraph('echo');
    expect(graph.nodes.map((n) => n.id)).toEqual(['__start__', 'echo', '__end__']);
    expect(await sdkFailure(alice.assistants.get('nope'))).toEqual({
      status: 404,
      body: { detail: 'Assistant not found' },
    });
  });

  it('threads are sessions: created, read, patched, searched, counted and deleted through the SDK, seen over REST', async () => {
    const thread = await alice.threads.create({
      graphId: 'echo',
      metadata: { tag: 'sdk', n: 1, nested: { ok: true } },
    });
    expect(thread).toMatchObject({
      status: 'idle',
      metadata: { tag: 'sdk', n: 1, nested: { ok: true }, graph_id: 'echo' },
    });
    expect(await alice.threads.get(thread.thread_id)).toEqual(thread);

    // The same session over REST, with the string value as is.
    const rest = await fetch(`${server.url}/sessions/${thread.thread_id}`, {
      headers: { authorization: `Bearer ${ALICE}` },
    });
    expect(rest.status).toBe(200);
    expect(((await rest.json()) as { metadata: Record<string, string> }).metadata).toMatchObject({
      tag: 'sdk',
      graph_id: 'echo',
    });

    const patched = await alice.threads.update(thread.thread_id, { metadata: { n: 2 } });
    expect(patched.metadata).toEqual({ tag: 'sdk', n: 2, nested: { ok: true }, graph_id: 'echo' });
    const found = await alice.threads.search({ metadata: { n: 2 } });
    expect(found.map((t) => t.thread_id)).toEqual([thread.thread_id]);
    expect(await alice.threads.count({ metadata: { tag: 'sdk' } })).toBe(1);
    expect(await alice.threads.count({ status: 'idle' })).toBeGreaterThanOrEqual(1);

    const state = await alice.threads.getState(thread.thread_id);
    expect(state).toMatchObject({ values: {}, next: [], checkpoint: null });
    expect(await alice.threads.getHistory(thread.thread_id)).toEqual([]);

    await alice.threads.delete(thread.thread_id);
    expect(await sdkFailure(alice.threads.get(thread.thread_id))).toEqual({
      status: 404,
      body: { detail: 'Thread not found' },
    });
  });

  it('a session made over REST is a thread; a chosen thread id honours if_exists', async () => {
    const created = await fetch(`${server.url}/sessions`, {
      method: 'POST',
      headers: { authorization: `Bearer ${ALICE}`, 'content-type': 'application/json' },
      body: JSON.stringify({ title: 'from REST', metadata: { origin: 'rest' } }),
    });
    expect(created.status).toBe(201);
    const session = (await created.json()) as { id: string };
    const thread = await alice.threads.get(session.id);
    expect(thread).toMatchObject({ thread_id: session.id, metadata: { origin: 'rest' } });

    const again = await alice.threads.create({ threadId: session.id, ifExists: 'do_nothing' });
    expect(again.thread_id).toBe(session.id);
    expect(await sdkFailure(alice.threads.create({ threadId: session.id }))).toEqual({
      status: 409,
      body: { detail: 'Thread already exists' },
    });
  });

  it("another tenant's thread is not found", async () => {
    const thread = await alice.threads.create({ metadata: { secret: 'alice' } });
    expect(await sdkFailure(bob.threads.get(thread.thread_id))).toMatchObject({ status: 404 });
    expect(
      await sdkFailure(bob.threads.update(thread.thread_id, { metadata: { x: 1 } })),
    ).toMatchObject({ status: 404 });
    expect(await sdkFailure(bob.threads.delete(thread.thread_id))).toMatchObject({ status: 404 });
    expect(await bob.threads.search({ metadata: { secret: 'alice' } })).toEqual([]);
    expect(await bob.threads.count({ metadata: { secret: 'alice' } })).toBe(0);
    // Without a key: 401.
    const anonymous = new Client({
      apiUrl: server.url,
      apiKey: null,
      callerOptions: { maxRetries: 0 },
    });
    expect(await sdkFailure(anonymous.threads.get(thread.thread_id))).toMatchObject({
      status: 401,
    });
  });

  it('bad input: 422 naming the field, never a 500', async () => {
    const badId = await sdkFailure(alice.threads.create({ threadId: 'not-a-uuid' }));
    expect(badId.status).toBe(422);
    expect(badId.body).toMatchObject({ errors: [{ path: 'body.thread_id' }] });
    const badLimit = await sdkFailure(alice.threads.search({ limit: 0 }));
    expect(badLimit).toMatchObject({ status: 422, body: { errors: [{ path: 'body.limit' }] } });
    const badStatus = await sdkFailure(
      alice.threads.count({ status: 'sleeping' as unknown as 'idle' }),
    );
    expect(badStatus).toMatchObject({ status: 422, body: { errors: [{ path: 'body.status' }] } });
    expect(await sdkFailure(alice.threads.get('not-a-uuid'))).toMatchObject({ status: 404 });
    const superstep = await sdkFailure(alice.threads.create({ supersteps: [{ updates: [] }] }));
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
        'export "missing"): no such export (the module exports: agent, approval, chain, echo, greeter, nested, notes, runtime, steps, story)',
    );
  });
});
