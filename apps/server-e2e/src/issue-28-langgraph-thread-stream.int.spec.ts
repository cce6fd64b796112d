import { mkdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { eventually } from './testing/agent-server';
import { langGraphServerForSpec, sdkFailure } from './testing/langgraph-sdk';
import { postgresServerDatabase, sqliteServerDatabase } from './testing/postgres';

/**
 * The `events` stream mode, error parts with the exception's name, and the thread join stream
 * (`GET /threads/{id}/stream`) of the LangGraph API (issue 28), with the official SDK against the
 * built server on SQLite and PostgreSQL: LangChain's callback events of a graph run, recorded so
 * a join sends them again; `{"error": "CustomError", "message": "Boo!"}` on the stream and on a
 * join; a thread's runs one after another, resumed from a `Last-Event-ID`, after a restart too.
 */
const ALICE = 'e2e-lg-thread-stream-alice-0123456789';
const BOB = 'e2e-lg-thread-stream-bob-0123456789';

type Part = { event: string; data: unknown; id?: string | undefined };

async function collect(stream: AsyncIterable<unknown>): Promise<Part[]> {
  const parts: Part[] = [];
  for await (const part of stream) parts.push(part as Part);
  return parts;
}

/** The next parts of an endless stream up to the one `last` accepts; the stream stays open. */
async function until(stream: AsyncIterator<unknown>, last: (part: Part) => boolean) {
  const parts: Part[] = [];
  for (;;) {
    const next = await stream.next();
    if (next.done === true) return parts;
    parts.push(next.value as Part);
    if (last(next.value as Part)) return parts;
  }
}

/** The parts of an endless stream up to the one `last` accepts; the stream is closed then. */
async function upTo(stream: AsyncGenerator<unknown>, last: (part: Part) => boolean) {
  try {
    return await until(stream, last);
  } finally {
    await stream.return(undefined);
  }
}

const runDone = (runId: string) => (part: Part) =>
  part.event === 'run_done' && (part.data as { run_id?: string }).run_id === runId;

describe.each([
  ['SQLite', () => sqliteServerDatabase('cognition-e2e-lg-thread-stream-')],
  ['PostgreSQL', postgresServerDatabase],
])('LangGraph API: events mode, error parts, thread join stream on %s (issue 28)', (_name, db) => {
  const lg = langGraphServerForSpec(
    { alice: ALICE, bob: BOB },
    db,
    'cognition-e2e-lg-thread-stream-ws-',
  );
  // Ends the test's thread streams (they stay open until the client goes).
  let closing = new AbortController();
  beforeEach(() => {
    closing = new AbortController();
  });
  afterEach(() => closing.abort());

  it("streams a graph run's LangChain events, and the same again on a join", async () => {
    const thread = await lg.alice.threads.create();
    const parts = await collect(
      lg.alice.runs.stream(thread.thread_id, 'agent', {
        input: { messages: [{ type: 'human', content: 'weather?' }] },
        streamMode: 'events',
      }),
    );
    expect(new Set(parts.map((p) => p.event))).toEqual(new Set(['metadata', 'events']));
    const events = parts.filter((p) => p.event === 'events');
    const kinds = new Set(events.map((p) => (p.data as { event: string }).event));
    for (const kind of [
      'on_chain_start',
      'on_chain_end',
      'on_chat_model_start',
      'on_chat_model_stream',
      'on_chat_model_end',
      'on_tool_start',
      'on_tool_end',
    ]) {
      expect(kinds).toContain(kind);
    }
    // The root run's stream chunks carry the other modes, not asked for here.
    expect(kinds).not.toContain('on_chain_stream');
    const opening = events[0]?.data as Record<string, unknown>;
    expect(opening).toMatchObject({ event: 'on_chain_start', name: 'LangGraph' });
    expect([typeof opening['run_id'], typeof opening['metadata']]).toEqual(['string', 'object']);
    expect(Array.isArray(opening['tags'])).toBe(true);
    const streamed = events
      .map((p) => p.data as { event: string; data: { chunk?: { content?: string } } })
      .filter((e) => e.event === 'on_chat_model_stream')
      .map((e) => e.data.chunk?.content ?? '')
      .join('');
    expect(streamed).toBe('The weather: sunny in Paris');
    expect(events.every((p) => p.id !== undefined)).toBe(true);

    const [run] = await lg.alice.runs.list(thread.thread_id);
    const joined = await collect(lg.alice.runs.joinStream(thread.thread_id, run?.run_id ?? ''));
    const strip = (list: Part[]) => list.filter((p) => p.event !== 'metadata');
    expect(strip(joined)).toEqual(strip(parts));
  });

  it("refuses the events mode for an agent's run, naming the entry", async () => {
    const thread = await lg.alice.threads.create({ graphId: 'agent:default' });
    const refused = await sdkFailure(
      lg.alice.runs.create(thread.thread_id, 'agent:default', {
        input: { messages: [{ type: 'human', content: 'hi' }] },
        streamMode: ['values', 'events'],
      }),
    );
    expect(refused.status).toBe(422);
    expect(JSON.stringify(refused.body)).toContain('body.stream_mode.1');
  });

  it("sends the exception's name in the error part, on the stream and on a join", async () => {
    const thread = await lg.alice.threads.create();
    const streamed = await collect(
      lg.alice.runs.stream(thread.thread_id, 'error', {
        input: { messages: [] },
        streamMode: ['debug', 'events'],
      }),
    );
    const error = { event: 'error', data: { error: 'CustomError', message: 'Boo!' } };
    expect(streamed.at(-1)).toMatchObject(error);

    const run = await lg.alice.runs.create(thread.thread_id, 'error', { input: { messages: [] } });
    const joined = await collect(lg.alice.runs.joinStream(thread.thread_id, run.run_id));
    expect(joined.at(-1)).toMatchObject(error);
    expect(await lg.alice.runs.get(thread.thread_id, run.run_id)).toMatchObject({
      status: 'error',
    });
    expect(await lg.alice.runs.join(thread.thread_id, run.run_id)).toMatchObject({
      __error__: { error: 'CustomError', message: 'Boo!' },
    });
  });

  it("joins a thread's stream: its runs one after another, from a Last-Event-ID, and after a restart", async () => {
    const thread = await lg.alice.threads.create();
    const first = await lg.alice.runs.create(thread.thread_id, 'echo', { input: { text: 'one' } });
    await lg.alice.runs.join(thread.thread_id, first.run_id);
    const second = await lg.alice.runs.create(thread.thread_id, 'echo', { input: { text: 'two' } });
    await lg.alice.runs.join(thread.thread_id, second.run_id);

    // From the beginning (`-`): both runs, each opened by `metadata` and closed by `run_done`.
    const all = await upTo(
      lg.alice.threads.joinStream(thread.thread_id, { lastEventId: '-', signal: closing.signal }),
      runDone(second.run_id),
    );
    expect(all.map((p) => [p.event, p.data])).toEqual([
      ['metadata', { run_id: first.run_id, attempt: 1 }],
      ['values', { text: 'one' }],
      ['values', { text: 'echo: one' }],
      ['run_done', { run_id: first.run_id, status: 'success' }],
      ['metadata', { run_id: second.run_id, attempt: 1 }],
      ['values', { text: 'two' }],
      ['values', { text: 'echo: two' }],
      ['run_done', { run_id: second.run_id, status: 'success' }],
    ]);
    // After the first run's end: the second run only.
    const cut = all[3]?.id ?? '';
    expect(cut.startsWith(`${first.run_id}:`)).toBe(true);
    const resumed = await upTo(
      lg.alice.threads.joinStream(thread.thread_id, { lastEventId: cut, signal: closing.signal }),
      runDone(second.run_id),
    );
    expect(resumed.map((p) => p.event)).toEqual(['metadata', 'values', 'values', 'run_done']);
    expect(resumed[0]?.data).toEqual({ run_id: second.run_id, attempt: 1 });

    // `lifecycle`: only the runs' starts and ends; `state_update`: only the states.
    const lifecycle = await upTo(
      lg.alice.threads.joinStream(thread.thread_id, {
        lastEventId: '-',
        streamMode: 'lifecycle',
        signal: closing.signal,
      }),
      runDone(second.run_id),
    );
    expect(lifecycle.map((p) => p.event)).toEqual(['metadata', 'run_done', 'metadata', 'run_done']);
    const states: Part[] = await upTo(
      lg.alice.threads.joinStream(thread.thread_id, {
        lastEventId: '-',
        streamMode: 'state_update',
        signal: closing.signal,
      }),
      (p) => JSON.stringify(p.data) === JSON.stringify({ text: 'echo: two' }),
    );
    expect(states.map((p) => p.event)).toEqual(['values', 'values', 'values', 'values']);

    // The thread's events are durable: after a restart, the same parts from the same cursor.
    await lg.restart();
    const afterRestart = await upTo(
      lg.alice.threads.joinStream(thread.thread_id, { lastEventId: cut, signal: closing.signal }),
      runDone(second.run_id),
    );
    expect(afterRestart).toEqual(resumed);
  });

  it('joined with no Last-Event-ID, follows the run in progress from its start, then the next run live', async () => {
    const dir = path.join(lg.workspace, 'thread-stream-steps');
    mkdirSync(dir, { recursive: true });
    const thread = await lg.alice.threads.create();
    const held = await lg.alice.runs.create(thread.thread_id, 'steps', { input: { dir } });
    await eventually(async () => {
      const run = await lg.alice.runs.get(thread.thread_id, held.run_id);
      return run.status === 'running';
    });
    const stream = lg.alice.threads.joinStream(thread.thread_id, {
      streamMode: ['lifecycle', 'state_update'],
      signal: closing.signal,
    });
    // The run in progress, from its first event (its first state is its input).
    const start = await stream.next();
    expect(start.value).toMatchObject({ event: 'metadata', data: { run_id: held.run_id } });
    writeFileSync(path.join(dir, 'release'), '');
    const rest = await until(stream, runDone(held.run_id));
    expect(rest.at(-2)).toMatchObject({ event: 'values', data: { done: ['first', 'second'] } });
    // Still open: a run started now arrives live.
    const next = await lg.alice.runs.create(thread.thread_id, 'steps', { input: { dir } });
    const live = await until(stream, runDone(next.run_id));
    expect(live[0]).toMatchObject({ event: 'metadata', data: { run_id: next.run_id } });
    expect(live.at(-1)).toMatchObject({ data: { run_id: next.run_id, status: 'success' } });
    await stream.return(undefined);
  });

  it("answers 404 for another tenant's thread and for patchState, 422 naming a bad mode or Last-Event-ID", async () => {
    const thread = await lg.alice.threads.create();
    expect(
      await sdkFailure(
        collect(lg.bob.threads.joinStream(thread.thread_id, { signal: closing.signal })),
      ),
    ).toEqual({
      status: 404,
      body: { detail: 'Thread not found' },
    });
    const get = (query: string, headers: Record<string, string> = {}) =>
      fetch(`${lg.server.url}/threads/${thread.thread_id}/stream${query}`, {
        headers: { 'x-api-key': ALICE, ...headers },
      });
    const badMode = await get('?stream_mode=run_modes&stream_mode=values');
    expect(badMode.status).toBe(422);
    expect(await badMode.text()).toContain('query.stream_mode.1');
    const badId = await get('', { 'Last-Event-ID': 'nope' });
    expect(badId.status).toBe(422);
    expect(await badId.text()).toContain('header.last-event-id');
    // `patchState` (a checkpoint's metadata) is not served, as by LangGraph.js's server.
    expect((await sdkFailure(lg.alice.threads.patchState(thread.thread_id, { a: 1 }))).status).toBe(
      404,
    );
  });
});
