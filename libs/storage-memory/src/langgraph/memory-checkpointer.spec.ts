import { expectValidationError } from '@cognition/storage/testing';
import { AIMessage, HumanMessage } from '@langchain/core/messages';
import type { RunnableConfig } from '@langchain/core/runnables';
import { Annotation, END, MessagesAnnotation, START, StateGraph } from '@langchain/langgraph';
import type { ChannelVersions, Checkpoint } from '@langchain/langgraph-checkpoint';
import { emptyCheckpoint, uuid6 } from '@langchain/langgraph-checkpoint';
import { ProjectingMemorySaver } from './memory-checkpointer';

/** A saver whose threads belong to no session, so only checkpoint storage is exercised. */
function saver(): ProjectingMemorySaver {
  return new ProjectingMemorySaver({
    sessionOfThread: () => undefined,
    applyProjection: () => {
      throw new Error('no thread belongs to a session here');
    },
  });
}

function checkpoint(values: Record<string, unknown>, versions: ChannelVersions): Checkpoint {
  return {
    ...emptyCheckpoint(),
    id: uuid6(-1),
    channel_values: values,
    channel_versions: versions,
  };
}

/** Puts `cp` as the child of `parent` (or as a thread's first checkpoint). */
async function put(
  memory: ProjectingMemorySaver,
  parent: RunnableConfig,
  cp: Checkpoint,
  newVersions: ChannelVersions,
): Promise<RunnableConfig> {
  return memory.put(parent, cp, { source: 'loop', step: 0, parents: {} }, newVersions);
}

/** The channel values a stored root checkpoint holds itself, read from the raw storage. */
async function storedValues(
  memory: ProjectingMemorySaver,
  config: RunnableConfig,
): Promise<Record<string, unknown>> {
  const threadId = String(config.configurable?.['thread_id']);
  const checkpointId = String(config.configurable?.['checkpoint_id']);
  const stored = memory.storage[threadId]?.['']?.[checkpointId];
  if (!stored) throw new Error(`nothing stored for ${checkpointId}`);
  return ((await memory.serde.loadsTyped('json', stored[0])) as Checkpoint).channel_values;
}

const root = (thread: string): RunnableConfig => ({
  configurable: { thread_id: thread, checkpoint_ns: '' },
});

describe('ProjectingMemorySaver channel deltas', () => {
  it('stores only changed channels and reads unchanged ones back from any ancestor', async () => {
    const memory = saver();
    const c0 = await put(memory, root('t'), checkpoint({ a: 'a1', b: 'b1' }, { a: 1, b: 1 }), {
      a: 1,
      b: 1,
    });
    const c1 = await put(memory, c0, checkpoint({ a: 'a1', b: 'b2' }, { a: 1, b: 2 }), { b: 2 });
    const c2 = await put(memory, c1, checkpoint({ a: 'a1', b: 'b3' }, { a: 1, b: 3 }), { b: 3 });

    expect(await storedValues(memory, c0)).toEqual({ a: 'a1', b: 'b1' });
    expect(await storedValues(memory, c1)).toEqual({ b: 'b2' });
    expect(await storedValues(memory, c2)).toEqual({ b: 'b3' });
    expect((await memory.getTuple(c2))?.checkpoint.channel_values).toEqual({ a: 'a1', b: 'b3' });
    expect((await memory.getTuple(root('t')))?.checkpoint.channel_values).toEqual({
      a: 'a1',
      b: 'b3',
    });
    const listed = [];
    for await (const tuple of memory.list(root('t'))) listed.push(tuple.checkpoint.channel_values);
    expect(listed).toEqual([
      { a: 'a1', b: 'b3' },
      { a: 'a1', b: 'b2' },
      { a: 'a1', b: 'b1' },
    ]);
  });

  it('carries a channel only while its version is unchanged', async () => {
    const memory = saver();
    const c0 = await put(memory, root('t'), checkpoint({ a: 'a1', b: 'b1' }, { a: 1, b: 1 }), {
      a: 1,
      b: 1,
    });
    // `a` moved to version 2 without being listed in newVersions, `b` was listed without a
    // value: neither may show the ancestor's stale value.
    const c1 = await put(memory, c0, checkpoint({ a: 'a2' }, { a: 2, b: 2 }), { b: 2 });
    expect((await memory.getTuple(c1))?.checkpoint.channel_values).toEqual({});
    const c2 = await put(memory, c1, checkpoint({ a: 'a2' }, { a: 2, b: 2 }), {});
    expect((await memory.getTuple(c2))?.checkpoint.channel_values).toEqual({});
  });

  it('keeps forks apart when both branches write the same channel version', async () => {
    const memory = saver();
    const c0 = await put(memory, root('t'), checkpoint({ a: 'start' }, { a: 1 }), { a: 1 });
    const left = await put(memory, c0, checkpoint({ a: 'left' }, { a: 2 }), { a: 2 });
    const right = await put(memory, c0, checkpoint({ a: 'right' }, { a: 2 }), { a: 2 });
    const leftChild = await put(memory, left, checkpoint({ a: 'left' }, { a: 2 }), {});
    const rightChild = await put(memory, right, checkpoint({ a: 'right' }, { a: 2 }), {});
    expect((await memory.getTuple(leftChild))?.checkpoint.channel_values).toEqual({ a: 'left' });
    expect((await memory.getTuple(rightChild))?.checkpoint.channel_values).toEqual({ a: 'right' });
  });

  it('never returns a checkpoint with half its channels when the thread is deleted mid-read', async () => {
    const memory = saver();
    const c0 = await put(memory, root('t'), checkpoint({ a: 'a1' }, { a: 1 }), { a: 1 });
    const c1 = await put(memory, c0, checkpoint({ a: 'a1', b: 'b1' }, { a: 1, b: 1 }), { b: 1 });
    const reading = memory.getTuple(c1);
    const listing = memory.list(root('t')).next();
    memory.deleteThreadNow('t');
    expect((await reading)?.checkpoint.channel_values).toEqual({ a: 'a1', b: 'b1' });
    const listed = await listing;
    expect(listed.done).toBe(false);
    if (!listed.done) expect(listed.value.checkpoint.channel_values).toEqual({ a: 'a1', b: 'b1' });
    expect(await memory.getTuple(c1)).toBeUndefined();
  });

  it('rejects unusable config values with a validation error naming the field', async () => {
    const memory = saver();
    const cp = checkpoint({}, {});
    await expectValidationError(put(memory, {}, cp, {}), 'configurable.thread_id');
    await expectValidationError(
      put(memory, { configurable: { thread_id: '__proto__' } }, cp, {}),
      'configurable.thread_id',
    );
    await expectValidationError(
      put(memory, { configurable: { thread_id: 't', checkpoint_ns: 7 } }, cp, {}),
      'configurable.checkpoint_ns',
    );
    await expectValidationError(put(memory, root('t'), { ...cp, id: '' }, {}), 'checkpoint.id');
    expect(await memory.getTuple({ configurable: {} })).toBeUndefined();
  });

  it('gives a compiled graph its full state while storing each value once per change', async () => {
    const memory = saver();
    const State = Annotation.Root({ ...MessagesAnnotation.spec, topic: Annotation<string>() });
    const graph = new StateGraph(State)
      .addNode('model', (state) => ({
        messages: [new AIMessage(`${state.topic}: ${state.messages.length}`)],
      }))
      .addEdge(START, 'model')
      .addEdge('model', END)
      .compile({ checkpointer: memory });
    const config = { configurable: { thread_id: 'graph' } };

    await graph.invoke({ topic: 'cats', messages: [new HumanMessage('a')] }, config);
    await graph.invoke({ messages: [new HumanMessage('b')] }, config);
    await graph.invoke({ messages: [new HumanMessage('c')] }, config);

    const values = (await graph.getState(config)).values as typeof State.State;
    expect(values.topic).toBe('cats');
    expect(values.messages.map((m) => m.text)).toEqual([
      'a',
      'cats: 1',
      'b',
      'cats: 3',
      'c',
      'cats: 5',
    ]);
    const holdingTopic: string[] = [];
    for await (const tuple of memory.list(config)) {
      const id = tuple.checkpoint.id;
      const own = await storedValues(memory, {
        configurable: { ...config.configurable, checkpoint_ns: '', checkpoint_id: id },
      });
      if ('topic' in own) holdingTopic.push(id);
    }
    expect(holdingTopic).toHaveLength(1);
    const history: (typeof State.State)[] = [];
    for await (const snapshot of graph.getStateHistory(config))
      history.push(snapshot.values as typeof State.State);
    // Every checkpoint after the first input (the oldest, empty one) still sees the topic.
    expect(history.slice(0, -1).every((values) => values.topic === 'cats')).toBe(true);
  });
});
