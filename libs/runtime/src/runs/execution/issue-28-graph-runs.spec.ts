import type { GraphRunKwargs } from '@cognition/contracts';
import { Annotation, END, START, StateGraph } from '@langchain/langgraph';
import type { TestRuntime } from '../../testing/test-runtime';
import { collect, createTestRuntime, waitFor } from '../../testing/test-runtime';
import type { CompiledUserGraph, UserGraph } from '../../user-graphs/user-graphs';
import { UserGraphs } from '../../user-graphs/user-graphs';

/**
 * Runs of `langgraph.json` graphs through the run machinery (issue 28): admission with the
 * kwargs stored on the run, the graph's chunks as `graph` events, the multitask strategies,
 * abort, and failures. The SDK-level behaviour is in apps/server-e2e (both databases).
 */

const State = Annotation.Root({
  n: Annotation<number>,
  trail: Annotation<string[]>({ reducer: (a, b) => a.concat(b), default: () => [] }),
});

/** Released by the test: the `wait` node blocks on it while `gated` is set. */
let gate: { open: () => void; opened: Promise<void> } | null = null;

const counter = new StateGraph(State)
  .addNode('add', (state: typeof State.State) => ({ n: state.n + 1, trail: ['add'] }))
  .addNode('wait', async () => {
    await gate?.opened;
    return { trail: ['wait'] };
  })
  .addEdge(START, 'add')
  .addEdge('add', 'wait')
  .addEdge('wait', END)
  .compile();

const broken = new StateGraph(State)
  .addNode('fail', () => {
    throw new Error('the node failed');
  })
  .addEdge(START, 'fail')
  .addEdge('fail', END)
  .compile();

/** Reports the run's runtime context (LangGraph's `runtime.context`) in its trail. */
const contextual = new StateGraph(State)
  .addNode('read', (_state: typeof State.State, runtime: { context?: { model?: string } }) => ({
    trail: [String(runtime.context?.model)],
  }))
  .addEdge(START, 'read')
  .addEdge('read', END)
  .compile();

function userGraph(graphId: string, graph: unknown): UserGraph {
  const compiled = graph as CompiledUserGraph;
  return {
    graphId,
    file: `${graphId}.ts`,
    exportName: graphId,
    kind: 'compiled',
    loaded: compiled,
    graph: () => Promise.resolve(compiled),
  };
}

function kwargs(graphId: string, input: unknown): GraphRunKwargs {
  return {
    graph_id: graphId,
    input,
    command: null,
    config: {},
    context: {},
    stream_mode: ['values', 'updates'],
    stream_subgraphs: false,
  };
}

describe('graph runs (langgraph.json) through the run machinery', () => {
  let rt: TestRuntime;

  beforeEach(async () => {
    gate = null;
    rt = await createTestRuntime({
      extra: {
        userGraphs: new UserGraphs(null, [
          userGraph('counter', counter),
          userGraph('broken', broken),
          userGraph('contextual', contextual),
        ]),
      },
    });
  });
  afterEach(() => rt.cleanup());

  const closedGate = () => {
    let open = () => undefined as void;
    const opened = new Promise<void>((resolve) => {
      open = resolve;
    });
    gate = { open, opened };
    return gate;
  };
  const eventsOf = async (sessionId: string, runId: string) =>
    collect(await rt.runs.events(sessionId, {}, { runId }));

  it('stores the kwargs, streams each chunk as a graph event and ends completed on the session thread', async () => {
    const session = await rt.createSession();
    const { run } = await rt.runs.scheduler.sendGraph({
      sessionId: session.id,
      scope: {},
      kwargs: kwargs('counter', { n: 1 }),
    });
    expect(run).toMatchObject({ status: 'queued', kwargs: kwargs('counter', { n: 1 }) });
    const events = (await eventsOf(session.id, run.id)).map((e) => e.event);
    const graphEvents = events.flatMap((e) => (e.type === 'graph' ? [e] : []));
    expect(graphEvents.map((e) => [e.mode, e.data])).toEqual([
      ['values', { n: 1, trail: [] }],
      ['updates', { add: { n: 2, trail: ['add'] } }],
      ['values', { n: 2, trail: ['add'] }],
      ['updates', { wait: { trail: ['wait'] } }],
      ['values', { n: 2, trail: ['add', 'wait'] }],
    ]);
    expect(events.at(-1)).toEqual({ type: 'done', assistant_data: null });
    expect(await rt.storage.runs.get(run.id)).toMatchObject({ status: 'completed' });
    const head = await rt.storage.checkpointer.getTuple({
      configurable: { thread_id: session.threadId, checkpoint_ns: '' },
    });
    expect(head?.checkpoint.channel_values).toMatchObject({ n: 2, trail: ['add', 'wait'] });
    expect(head?.metadata).toMatchObject({ run_id: run.id });
  });

  it('refuses a second run under reject, queues one under enqueue and starts it when the first ends', async () => {
    const session = await rt.createSession();
    const held = closedGate();
    const first = await rt.runs.scheduler.sendGraph({
      sessionId: session.id,
      scope: {},
      kwargs: kwargs('counter', { n: 1 }),
    });
    await waitFor(async () => (await rt.storage.runs.get(first.run.id))?.status === 'running');
    await expect(
      rt.runs.scheduler.sendGraph({
        sessionId: session.id,
        scope: {},
        kwargs: kwargs('counter', { n: 10 }),
      }),
    ).rejects.toMatchObject({ code: 'RUN_IN_PROGRESS' });
    const second = await rt.runs.scheduler.sendGraph({
      sessionId: session.id,
      scope: {},
      kwargs: kwargs('counter', { n: 10 }),
      multitaskStrategy: 'enqueue',
    });
    expect(second.run).toMatchObject({ status: 'pending', supersedesRunId: first.run.id });
    held.open();
    const events = (await eventsOf(session.id, second.run.id)).map((e) => e.event);
    expect(events.at(-1)?.type).toBe('done');
    expect(events.flatMap((e) => (e.type === 'graph' ? [e.data] : [])).at(-1)).toEqual({
      n: 11,
      trail: ['add', 'wait', 'add', 'wait'],
    });
  });

  it('ends a cancelled graph run aborted', async () => {
    const session = await rt.createSession();
    closedGate();
    const { run } = await rt.runs.scheduler.sendGraph({
      sessionId: session.id,
      scope: {},
      kwargs: kwargs('counter', { n: 1 }),
    });
    await waitFor(async () => (await rt.storage.runs.get(run.id))?.status === 'running');
    await rt.runs.abort(session.id, {});
    const events = (await eventsOf(session.id, run.id)).map((e) => e.event);
    expect(events.at(-1)).toMatchObject({ type: 'error', code: 'ABORTED' });
    expect(await rt.storage.runs.get(run.id)).toMatchObject({ status: 'aborted' });
  });

  it("applies the run config's recursion_limit: a graph that needs more steps fails with LangGraph's error", async () => {
    const session = await rt.createSession();
    const { run } = await rt.runs.scheduler.sendGraph({
      sessionId: session.id,
      scope: {},
      kwargs: { ...kwargs('counter', { n: 1 }), config: { recursion_limit: 1 } },
    });
    const events = (await eventsOf(session.id, run.id)).map((e) => e.event);
    expect(events.at(-1)).toMatchObject({ type: 'error', code: 'TIMEOUT' });
    expect(JSON.stringify(events.at(-1))).toContain('GraphRecursionError: Recursion limit of 1');
    expect(await rt.storage.runs.get(run.id)).toMatchObject({ status: 'failed' });
  });

  it("gives the graph's nodes the run's context as LangGraph's runtime.context", async () => {
    const session = await rt.createSession();
    const { run } = await rt.runs.scheduler.sendGraph({
      sessionId: session.id,
      scope: {},
      kwargs: { ...kwargs('contextual', { n: 1 }), context: { model: 'openai' } },
    });
    const events = (await eventsOf(session.id, run.id)).map((e) => e.event);
    const values = events.flatMap((e) =>
      e.type === 'graph' && e.mode === 'values' ? [e.data] : [],
    );
    expect(values.at(-1)).toEqual({ n: 1, trail: ['openai'] });
  });

  it('fails a run whose graph throws, or whose graph is not loaded, with the reason', async () => {
    const session = await rt.createSession();
    const failed = await rt.runs.scheduler.sendGraph({
      sessionId: session.id,
      scope: {},
      kwargs: kwargs('broken', { n: 1 }),
    });
    const events = (await eventsOf(session.id, failed.run.id)).map((e) => e.event);
    // Our code and message, and the graph's exception beside them (the LangGraph API's part).
    expect(events.at(-1)).toMatchObject({
      type: 'error',
      code: 'INTERNAL_ERROR',
      exception: { name: 'Error', message: 'the node failed' },
    });
    expect(JSON.stringify(events.at(-1))).toContain('the node failed');
    const other = await rt.createSession();
    const missing = await rt.runs.scheduler.sendGraph({
      sessionId: other.id,
      scope: {},
      kwargs: kwargs('gone', {}),
    });
    const ended = (await eventsOf(other.id, missing.run.id)).map((e) => e.event);
    expect(ended.at(-1)).toMatchObject({ type: 'error', code: 'VALIDATION_ERROR' });
    // Not the graph's exception: nothing beside our code.
    expect(ended.at(-1)).not.toHaveProperty('exception');
    expect(await rt.storage.runs.get(missing.run.id)).toMatchObject({ status: 'failed' });
  });

  it('with the events mode, records LangChain events beside the chunks of the other modes', async () => {
    const session = await rt.createSession();
    const { run } = await rt.runs.scheduler.sendGraph({
      sessionId: session.id,
      scope: {},
      kwargs: { ...kwargs('contextual', { n: 1 }), stream_mode: ['values', 'events'] },
    });
    const graph = (await eventsOf(session.id, run.id)).flatMap((e) =>
      e.event.type === 'graph' ? [e.event] : [],
    );
    const kinds = graph.flatMap((e) =>
      e.mode === 'events' ? [(e.data as { event: string }).event] : [],
    );
    expect(kinds[0]).toBe('on_chain_start');
    expect(kinds.at(-1)).toBe('on_chain_end');
    // The root run's stream chunks are the values, not events.
    expect(kinds).not.toContain('on_chain_stream');
    const values = graph.flatMap((e) => (e.mode === 'values' ? [e.data] : []));
    expect(values.at(-1)).toEqual({ n: 1, trail: ['undefined'] });
    // Without it, no events are made.
    const plain = await rt.createSession();
    const without = await rt.runs.scheduler.sendGraph({
      sessionId: plain.id,
      scope: {},
      kwargs: kwargs('contextual', { n: 1 }),
    });
    const modes = (await eventsOf(plain.id, without.run.id)).flatMap((e) =>
      e.event.type === 'graph' ? [e.event.mode] : [],
    );
    expect(new Set(modes)).toEqual(new Set(['values', 'updates']));
  });
});
