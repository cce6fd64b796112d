import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import type { Client } from '@langchain/langgraph-sdk';
import { eventually } from './testing/agent-server';
import { langGraphServerForSpec, sdkFailure } from './testing/langgraph-sdk';
import { postgresServerDatabase, sqliteServerDatabase } from './testing/postgres';

/**
 * Runs of langgraph.json graphs (issue 28, user graphs' runs) through our run machinery, driven
 * by the official SDK against the built server on SQLite and PostgreSQL: a tool loop streamed
 * in values / updates / messages-tuple, a background run joined, `interrupt()` and
 * `Command({resume})`, bad input, another tenant's thread, and a run resumed from its last
 * checkpoint after the server was killed with SIGKILL.
 */
const ALICE = 'e2e-graph-runs-alice-0123456789';
const BOB = 'e2e-graph-runs-bob-0123456789';

type Part = { event: string; data: unknown; id?: string };
type WireMessage = { type: string; content: unknown; tool_calls?: unknown[] };

describe.each([
  ['SQLite', () => sqliteServerDatabase('cognition-e2e-graph-runs-')],
  ['PostgreSQL', postgresServerDatabase],
])('LangGraph API: runs of langgraph.json graphs on %s (issue 28)', (_name, createDatabase) => {
  const lg = langGraphServerForSpec(
    { alice: ALICE, bob: BOB },
    createDatabase,
    'cognition-e2e-graph-runs-ws-',
  );

  const stream = async (...args: Parameters<Client['runs']['stream']>) => {
    const parts: Part[] = [];
    for await (const part of lg.alice.runs.stream(...args)) parts.push(part as Part);
    return parts;
  };

  it('streams a tool loop: metadata, updates per node, message tuples, custom, values, each part with its event id', async () => {
    const thread = await lg.alice.threads.create();
    const parts = await stream(thread.thread_id, 'agent', {
      input: { messages: [{ type: 'human', content: 'weather in Paris?' }] },
      streamMode: ['values', 'updates', 'messages-tuple', 'custom'],
    });
    const runId = (parts[0]?.data as { run_id: string }).run_id;
    expect(parts[0]).toEqual({ event: 'metadata', data: { run_id: runId, attempt: 1 } });
    expect(parts.slice(1).every((p) => p.id?.startsWith(`${runId}:`))).toBe(true);
    const updates = parts.filter((p) => p.event === 'updates');
    expect(updates.map((p) => Object.keys(p.data as object))).toEqual([
      ['model'],
      ['tools'],
      ['model'],
    ]);
    expect(parts.filter((p) => p.event === 'custom').map((p) => p.data)).toEqual([
      { step: 'asking for the weather' },
    ]);
    // The fake model's answer, streamed as message chunks of the `model` node.
    const chunks = parts
      .filter((p) => p.event === 'messages')
      .map((p) => p.data as [WireMessage, { langgraph_node: string }])
      .filter(([chunk]) => chunk.type === 'AIMessageChunk');
    expect(chunks.map(([chunk]) => chunk.content).join('')).toBe('The weather: sunny in Paris');
    expect(chunks.every(([, meta]) => meta.langgraph_node === 'model')).toBe(true);
    const values = parts.filter((p) => p.event === 'values').at(-1)?.data as {
      messages: WireMessage[];
    };
    expect(values.messages.map((m) => m.type)).toEqual(['human', 'ai', 'tool', 'ai']);
    expect(values.messages[3]?.content).toBe('The weather: sunny in Paris');
    // The thread holds the graph's state; the run is one of ours, with its kwargs.
    expect((await lg.alice.threads.get(thread.thread_id)).status).toBe('idle');
    const [run] = await lg.alice.runs.list(thread.thread_id);
    expect(run).toMatchObject({ run_id: runId, status: 'success', kwargs: { graph_id: 'agent' } });
  });

  it('a background run: create, join, get; join stream replays its values after an event id', async () => {
    const thread = await lg.alice.threads.create();
    const run = await lg.alice.runs.create(thread.thread_id, 'echo', {
      input: { text: 'hi' },
      streamMode: ['values', 'updates'],
    });
    expect(await lg.alice.runs.join(thread.thread_id, run.run_id)).toEqual({ text: 'echo: hi' });
    expect(await lg.alice.runs.get(thread.thread_id, run.run_id)).toMatchObject({
      status: 'success',
    });
    const all: Part[] = [];
    for await (const part of lg.alice.runs.joinStream(thread.thread_id, run.run_id, {
      streamMode: ['values', 'updates'],
    })) {
      all.push(part);
    }
    expect(all.map((p) => p.event)).toEqual(['metadata', 'values', 'updates', 'values']);
    expect(all.at(-1)?.data).toEqual({ text: 'echo: hi' });
    const after: Part[] = [];
    for await (const part of lg.alice.runs.joinStream(thread.thread_id, run.run_id, {
      lastEventId: all[1]?.id ?? '',
      streamMode: ['values', 'updates'],
    })) {
      after.push(part);
    }
    expect(after.map((p) => p.id)).toEqual(all.slice(2).map((p) => p.id));
    // What `useStream` sends to rejoin a run it has seen nothing of (`Last-Event-ID: -1`, the
    // checkpoint it knows): the whole stream again.
    const rejoined: Part[] = [];
    for await (const part of lg.alice.runs.joinStream(thread.thread_id, run.run_id, {
      lastEventId: '-1',
      checkpointId: 'any-checkpoint',
      streamMode: ['values', 'updates'],
    })) {
      rejoined.push(part);
    }
    expect(rejoined.map((p) => p.id)).toEqual(all.map((p) => p.id));
  });

  it('interrupt() ends the run and leaves the thread interrupted; command.resume continues it', async () => {
    const thread = await lg.alice.threads.create();
    const paused = (await lg.alice.runs.wait(thread.thread_id, 'approval', {
      input: { request: 'deploy' },
    })) as Record<string, unknown>;
    expect(paused).toMatchObject({
      request: 'deploy',
      __interrupt__: [{ value: { question: 'approve deploy?' } }],
    });
    const waiting = await lg.alice.threads.get(thread.thread_id);
    expect(waiting.status).toBe('interrupted');
    expect(Object.values(waiting.interrupts).flat()).toMatchObject([
      { value: { question: 'approve deploy?' } },
    ]);
    const parts = await stream(thread.thread_id, 'approval', {
      command: { resume: 'yes' },
      streamMode: ['values', 'updates'],
    });
    expect(parts.filter((p) => p.event === 'updates').map((p) => p.data)).toEqual([
      { ask: { answer: 'deploy: yes' } },
    ]);
    expect(parts.at(-1)).toMatchObject({
      event: 'values',
      data: { request: 'deploy', answer: 'deploy: yes' },
    });
    expect((await lg.alice.threads.get(thread.thread_id)).status).toBe('idle');
    const runs = await lg.alice.runs.list(thread.thread_id);
    expect(runs.map((r) => r.status)).toEqual(['success', 'success']);
  });

  it("runs graphs written for LangGraph's server: runtime.context, LANGGRAPH_CONFIG, recursion_limit", async () => {
    // The reference suite's regressions (docs/langgraph-api.md, "The reference suite").
    const thread = await lg.alice.threads.create();
    const input = { text: '/a/b/c.txt' };
    // The system assistant's context comes from LANGGRAPH_CONFIG (langgraph.json's env).
    expect(await lg.alice.runs.wait(thread.thread_id, 'runtime', { input })).toEqual({
      text: 'c.txt from-env',
    });
    expect(
      await lg.alice.runs.wait(thread.thread_id, 'runtime', {
        input,
        context: { model: 'openai' },
      }),
    ).toEqual({ text: 'c.txt openai' });
    const limited = await lg.alice.threads.create();
    await expect(
      lg.alice.runs.wait(limited.thread_id, 'chain', {
        input: { text: 's' },
        config: { recursion_limit: 1 },
      }),
    ).rejects.toThrow(/GraphRecursionError/);
    expect((await lg.alice.threads.get(limited.thread_id)).status).toBe('error');
  });

  it("bad input: 422 naming the field; another graph's or tenant's thread refused", async () => {
    const thread = await lg.alice.threads.create();
    // `goto` names nodes (or `Send`s): a number is refused, naming it.
    const notANode: never = JSON.parse('42') as never;
    const goto = await sdkFailure(
      lg.alice.runs.create(thread.thread_id, 'approval', { command: { goto: notANode } }),
    );
    expect(goto).toMatchObject({ status: 422, body: { errors: [{ path: 'body.command.goto' }] } });
    const bogusModes: never = JSON.parse('["values", "bogus"]') as never;
    const badMode = await sdkFailure(
      lg.alice.runs.create(thread.thread_id, 'echo', {
        input: { text: 'x' },
        streamMode: bogusModes,
      }),
    );
    expect(badMode).toMatchObject({
      status: 422,
      body: { errors: [{ path: 'body.stream_mode.1' }] },
    });
    await lg.alice.runs.wait(thread.thread_id, 'echo', { input: { text: 'x' } });
    const otherGraph = await sdkFailure(
      lg.alice.runs.create(thread.thread_id, 'approval', { input: { request: 'x' } }),
    );
    expect(otherGraph).toMatchObject({
      status: 422,
      body: { errors: [{ path: 'body.assistant_id' }] },
    });
    const agentRun = await sdkFailure(
      lg.alice.runs.create(thread.thread_id, 'agent:default', {
        input: { messages: [{ type: 'human', content: 'x' }] },
      }),
    );
    expect(agentRun).toMatchObject({
      status: 422,
      body: { errors: [{ path: 'body.assistant_id' }] },
    });
    expect(
      await sdkFailure(lg.bob.runs.create(thread.thread_id, 'echo', { input: { text: 'x' } })),
    ).toEqual({ status: 404, body: { detail: 'Thread not found' } });
  });

  it('a run cut off by SIGKILL resumes from its last checkpoint after the restart', async () => {
    const dir = path.join(lg.workspace, `steps-${Date.now()}`);
    mkdirSync(dir);
    const log = () => {
      try {
        return readFileSync(path.join(dir, 'log'), 'utf8');
      } catch {
        return '';
      }
    };
    const thread = await lg.alice.threads.create();
    const run = await lg.alice.runs.create(thread.thread_id, 'steps', { input: { dir } });
    // Killed while the second step waits, once the first one is checkpointed (LangGraph writes
    // a step's checkpoint while the next step runs).
    await eventually(() => Promise.resolve(log().includes('second')));
    await eventually(async () => {
      const state = await lg.alice.threads.getState<{ done?: string[] }>(thread.thread_id);
      return state.values.done?.includes('first');
    });
    await lg.restart({
      signal: 'SIGKILL',
      whileDown: () => writeFileSync(path.join(dir, 'release'), ''),
    });
    expect(await lg.alice.runs.join(thread.thread_id, run.run_id)).toEqual({
      dir,
      done: ['first', 'second'],
    });
    // The first step ran once; the second was cut off and redone.
    expect(log()).toBe('first\nsecond\nsecond\n');
    expect(await lg.alice.runs.get(thread.thread_id, run.run_id)).toMatchObject({
      status: 'success',
    });
  });
});
