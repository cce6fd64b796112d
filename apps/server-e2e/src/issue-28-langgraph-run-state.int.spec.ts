import type { ThreadState } from '@langchain/langgraph-sdk';
import { langGraphServerForSpec, sdkFailure } from './testing/langgraph-sdk';
import { postgresServerDatabase, sqliteServerDatabase } from './testing/postgres';

/**
 * The LangGraph API's run and state features (issue 28), driven by the official SDK against the
 * built server on SQLite and PostgreSQL: a thread's state and history with LangGraph's `next`,
 * `tasks` (with their interrupts) and `interrupts`; runs stopped by `interrupt_before` /
 * `interrupt_after` and resumed by a null input or a `command`; time travel (`checkpoint_id`,
 * `checkpoint`) on a graph and on an agent.
 */
const ALICE = 'e2e-lg-run-state-alice-0123456789';
const BOB = 'e2e-lg-run-state-bob-0123456789';

type Chain = { text: string; path: string[] };

describe.each([
  ['SQLite', () => sqliteServerDatabase('cognition-e2e-lg-run-state-')],
  ['PostgreSQL', postgresServerDatabase],
])('LangGraph API: run and state features on %s (issue 28)', (_name, createDatabase) => {
  const lg = langGraphServerForSpec(
    { alice: ALICE, bob: BOB },
    createDatabase,
    'cognition-e2e-lg-run-state-ws-',
    { echoModel: true },
  );

  it("a graph waiting in interrupt(): the state's next, tasks with their interrupts, interrupts; the same in history and on the thread", async () => {
    const thread = await lg.alice.threads.create();
    await lg.alice.runs.wait(thread.thread_id, 'approval', { input: { request: 'deploy' } });

    const state = await lg.alice.threads.getState(thread.thread_id);
    const interrupt = { id: expect.any(String) as string, value: { question: 'approve deploy?' } };
    expect(state.next).toEqual(['ask']);
    expect(state.tasks).toEqual([
      {
        id: expect.any(String) as string,
        name: 'ask',
        path: ['__pregel_pull', 'ask'],
        error: null,
        interrupts: [interrupt],
        checkpoint: null,
        state: null,
        result: null,
      },
    ]);
    expect((state as ThreadState & { interrupts: unknown[] }).interrupts).toEqual([interrupt]);
    const taskId = state.tasks[0]?.id ?? '';

    // The newest history entry is that state; the one before it is the input, `__start__` next.
    const [head, before] = await lg.alice.threads.getHistory(thread.thread_id, { limit: 2 });
    expect(head).toEqual(state);
    expect(before?.next).toEqual(['__start__']);
    expect(before?.tasks.map((t) => [t.name, t.interrupts])).toEqual([['__start__', []]]);
    expect((before as ThreadState & { interrupts: unknown[] }).interrupts).toEqual([]);

    // The state at that checkpoint, by id, is the same.
    const checkpointId = state.checkpoint.checkpoint_id ?? '';
    expect(await lg.alice.threads.getState(thread.thread_id, checkpointId)).toEqual(state);

    const waiting = await lg.alice.threads.get(thread.thread_id);
    expect(waiting.status).toBe('interrupted');
    expect(waiting.interrupts).toEqual({ [taskId]: [interrupt] });

    await lg.alice.runs.wait(thread.thread_id, 'approval', { command: { resume: 'yes' } });
    const done = await lg.alice.threads.getState(thread.thread_id);
    expect(done).toMatchObject({
      values: { request: 'deploy', answer: 'deploy: yes' },
      next: [],
      tasks: [],
      interrupts: [],
    });
    const idle = await lg.alice.threads.get(thread.thread_id);
    expect(idle.status).toBe('idle');
    expect(idle.interrupts).toEqual({});
  });

  it('interrupt_before stops before a node, a null input goes on; interrupt_after stops after one, a command resumes', async () => {
    const thread = await lg.alice.threads.create();
    const stopped = (await lg.alice.runs.wait(thread.thread_id, 'chain', {
      input: { text: 't' },
      interruptBefore: ['b'],
    })) as Chain;
    expect(stopped).toEqual({ text: 't+a', path: ['a'] });
    const state = await lg.alice.threads.getState<Chain>(thread.thread_id);
    expect(state.next).toEqual(['b']);
    expect(state.tasks.map((t) => [t.name, t.interrupts])).toEqual([['b', []]]);
    const waiting = await lg.alice.threads.get(thread.thread_id);
    expect(waiting.status).toBe('interrupted');
    expect(waiting.interrupts).toEqual({});
    const [run] = await lg.alice.runs.list(thread.thread_id);
    expect(run).toMatchObject({ status: 'success', kwargs: { interrupt_before: ['b'] } });

    // LangGraph's way on: a run with no input continues from where the thread stopped.
    expect(await lg.alice.runs.wait(thread.thread_id, 'chain', { input: null })).toEqual({
      text: 't+a',
      path: ['a', 'b', 'c'],
    });
    expect((await lg.alice.threads.get(thread.thread_id)).status).toBe('idle');
    expect((await lg.alice.threads.getState(thread.thread_id)).next).toEqual([]);

    // After a node; resumed by a command.
    const other = await lg.alice.threads.create();
    expect(
      await lg.alice.runs.wait(other.thread_id, 'chain', {
        input: { text: 'u' },
        interruptAfter: ['a', 'b'],
      }),
    ).toEqual({ text: 'u+a', path: ['a'] });
    expect((await lg.alice.threads.getState(other.thread_id)).next).toEqual(['b']);
    expect(
      await lg.alice.runs.wait(other.thread_id, 'chain', {
        command: { resume: 'go' },
        interruptAfter: ['b'],
      }),
    ).toEqual({ text: 'u+a', path: ['a', 'b'] });
    expect(await lg.alice.runs.wait(other.thread_id, 'chain', { input: null })).toEqual({
      text: 'u+a',
      path: ['a', 'b', 'c'],
    });

    // "*": before every node, so before the first.
    const star = await lg.alice.threads.create();
    await lg.alice.runs.wait(star.thread_id, 'chain', {
      input: { text: 's' },
      interruptBefore: '*',
    });
    const atStart = await lg.alice.threads.getState<Chain>(star.thread_id);
    expect(atStart.values).toEqual({ text: 's', path: [] });
    expect(atStart.next).toEqual(['a']);
  });

  it('streams a run stopped by interrupt_before, then its continuation', async () => {
    const thread = await lg.alice.threads.create();
    const first: { event: string; data: unknown }[] = [];
    for await (const part of lg.alice.runs.stream(thread.thread_id, 'chain', {
      input: { text: 'x' },
      interruptBefore: ['c'],
      streamMode: ['values'],
    })) {
      first.push(part);
    }
    // The values up to the stop, then LangGraph's own empty `__interrupt__` marker.
    const values = first.filter((p) => p.event === 'values').map((p) => p.data);
    expect(values.at(-1)).toEqual({ __interrupt__: [] });
    expect(values.at(-2)).toEqual({ text: 'x+a', path: ['a', 'b'] });
    const second: { event: string; data: unknown }[] = [];
    for await (const part of lg.alice.runs.stream(thread.thread_id, 'chain', {
      input: null,
      streamMode: ['updates'],
    })) {
      second.push(part);
    }
    expect(second.filter((p) => p.event === 'updates').map((p) => p.data)).toEqual([
      { c: { path: ['c'] } },
    ]);
  });

  it('interrupt_before/after bad input: 422 naming the entry; refused for an agent assistant', async () => {
    const thread = await lg.alice.threads.create();
    const unknown = await sdkFailure(
      lg.alice.runs.create(thread.thread_id, 'chain', {
        input: { text: 'x' },
        interruptBefore: ['a', 'nope'],
      }),
    );
    expect(unknown.status).toBe(422);
    expect(unknown.body).toMatchObject({
      errors: [{ path: 'body.interrupt_before.1' }],
    });
    const badAfter = await sdkFailure(
      lg.alice.runs.create(thread.thread_id, 'chain', {
        input: { text: 'x' },
        interruptAfter: 'a' as never,
      }),
    );
    expect(badAfter.status).toBe(422);
    expect(JSON.stringify(badAfter.body)).toContain('body.interrupt_after');
    const agent = await sdkFailure(
      lg.alice.runs.create(thread.thread_id, 'agent:default', {
        input: { messages: [{ type: 'human', content: 'hi' }] },
        interruptBefore: ['model'],
      }),
    );
    expect(agent.status).toBe(422);
    expect(agent.body).toMatchObject({ errors: [{ path: 'body.interrupt_before' }] });
    expect(await lg.alice.runs.list(thread.thread_id)).toEqual([]);
  });

  it('time travel on a graph: a run from an earlier checkpoint forks the history there', async () => {
    const thread = await lg.alice.threads.create();
    await lg.alice.runs.wait(thread.thread_id, 'chain', { input: { text: 'v' } });
    const history = await lg.alice.threads.getHistory<Chain>(thread.thread_id, { limit: 100 });
    // The checkpoint after `a` ran: `b` is next.
    const afterA = history.find((s) => s.next[0] === 'b');
    expect(afterA?.values).toEqual({ text: 'v+a', path: ['a'] });
    const forkId = afterA?.checkpoint.checkpoint_id ?? '';

    // Replayed from there (no input): `b` and `c` run again on a new branch.
    const replay = await lg.alice.runs.wait(thread.thread_id, 'chain', {
      input: null,
      checkpointId: forkId,
    });
    expect(replay).toEqual({ text: 'v+a', path: ['a', 'b', 'c'] });
    const after = await lg.alice.threads.getHistory<Chain>(thread.thread_id, { limit: 100 });
    // The old branch is kept whole; the new head descends from the fork point, not the old head.
    const added = after.slice(0, after.length - history.length);
    expect(after.slice(added.length).map((s) => s.checkpoint.checkpoint_id)).toEqual(
      history.map((s) => s.checkpoint.checkpoint_id),
    );
    const byId = new Map(after.map((s) => [s.checkpoint.checkpoint_id, s]));
    const ancestors: string[] = [];
    for (let s = after[0]; s?.parent_checkpoint; s = byId.get(s.parent_checkpoint.checkpoint_id)) {
      ancestors.push(s.parent_checkpoint.checkpoint_id ?? '');
    }
    expect(ancestors).toContain(forkId);
    expect(ancestors).not.toContain(history[0]?.checkpoint.checkpoint_id);
    expect(added.map((s) => s.next)).toContainEqual(['c']);

    // With an update as the run's command at that checkpoint (`checkpoint` object form).
    const updated = await lg.alice.runs.wait(thread.thread_id, 'chain', {
      command: { update: { text: 'w' } },
      checkpoint: { checkpoint_id: forkId, checkpoint_ns: '' } as never,
    });
    expect(updated).toEqual({ text: 'w', path: ['a', 'b', 'c'] });
    const [run] = await lg.alice.runs.list(thread.thread_id);
    expect(run).toMatchObject({ status: 'success', kwargs: { checkpoint_id: forkId } });

    // An unknown checkpoint: 404, no run.
    const runsBefore = (await lg.alice.runs.list(thread.thread_id, { limit: 100 })).length;
    const missing = await sdkFailure(
      lg.alice.runs.wait(thread.thread_id, 'chain', {
        input: null,
        checkpointId: '1f000000-0000-6000-8000-000000000000',
      }),
    );
    expect(missing).toEqual({ status: 404, body: { detail: 'Checkpoint not found' } });
    expect((await lg.alice.runs.list(thread.thread_id, { limit: 100 })).length).toBe(runsBefore);
    // Another tenant's thread stays not found, whatever the checkpoint.
    const theirs = await sdkFailure(
      lg.bob.runs.wait(thread.thread_id, 'chain', { input: null, checkpointId: forkId }),
    );
    expect(theirs.status).toBe(404);
  });

  it("time travel on an agent's thread: the run answers from the checkpoint's conversation", async () => {
    const thread = await lg.alice.threads.create({ graphId: 'agent:default' });
    const human = (content: string) => ({ messages: [{ type: 'human', content }] });
    await lg.alice.runs.wait(thread.thread_id, 'agent:default', { input: human('first') });
    const afterFirst = await lg.alice.threads.getState<{ messages: { content: unknown }[] }>(
      thread.thread_id,
    );
    await lg.alice.runs.wait(thread.thread_id, 'agent:default', { input: human('second') });
    expect(
      (await lg.alice.threads.getState<{ messages: unknown[] }>(thread.thread_id)).values.messages,
    ).toHaveLength(4);
    const before = await lg.alice.threads.getHistory(thread.thread_id, { limit: 100 });

    const values = (await lg.alice.runs.wait(thread.thread_id, 'agent:default', {
      input: human('again'),
      checkpointId: afterFirst.checkpoint.checkpoint_id ?? '',
    })) as { messages: { type: string; content: unknown }[] };
    // The conversation of the checkpoint (first question and answer), then the new turn.
    expect(values.messages.map((m) => [m.type, m.content])).toEqual([
      ['human', 'first'],
      ['ai', 'You said: first'],
      ['human', 'again'],
      ['ai', 'You said: again'],
    ]);
    // The history branches at the checkpoint, as LangGraph's: the new head descends from it,
    // not from the old head, and the old branch is kept.
    const after = await lg.alice.threads.getHistory(thread.thread_id, { limit: 100 });
    const byId = new Map(after.map((s) => [s.checkpoint.checkpoint_id, s]));
    const ancestors: string[] = [];
    for (let s = after[0]; s?.parent_checkpoint; s = byId.get(s.parent_checkpoint.checkpoint_id)) {
      ancestors.push(s.parent_checkpoint.checkpoint_id ?? '');
    }
    expect(ancestors).toContain(afterFirst.checkpoint.checkpoint_id);
    expect(ancestors).not.toContain(before[0]?.checkpoint.checkpoint_id);
    expect(after.map((s) => s.checkpoint.checkpoint_id)).toEqual(
      expect.arrayContaining(before.map((s) => s.checkpoint.checkpoint_id)),
    );
  });

  it("copies a graph thread with every checkpoint (same ids and states); a run on the copy leaves the source's alone", async () => {
    const thread = await lg.alice.threads.create({ metadata: { owner: 'ada' } });
    await lg.alice.runs.wait(thread.thread_id, 'chain', { input: { text: 'c' } });
    const history = await lg.alice.threads.getHistory<Chain>(thread.thread_id, { limit: 100 });
    expect(history.length).toBeGreaterThan(3);

    const copy = await lg.alice.threads.copy(thread.thread_id);
    expect(copy.thread_id).not.toBe(thread.thread_id);
    expect(copy).toMatchObject({ metadata: { owner: 'ada' }, values: { text: 'c+a' } });
    const copied = await lg.alice.threads.getHistory<Chain>(copy.thread_id, { limit: 100 });
    const strip = (states: ThreadState<Chain>[]) =>
      states.map((s) => ({
        id: s.checkpoint.checkpoint_id,
        parent: s.parent_checkpoint?.checkpoint_id ?? null,
        values: s.values,
        next: s.next,
      }));
    expect(strip(copied)).toEqual(strip(history));
    expect(copied.every((s) => s.checkpoint.thread_id === copy.thread_id)).toBe(true);

    // Time travel on the copy, from a checkpoint it copied: the source does not change.
    const afterA = copied.find((s) => s.next[0] === 'b');
    await lg.alice.runs.wait(copy.thread_id, 'chain', {
      command: { update: { text: 'copy' } },
      checkpointId: afterA?.checkpoint.checkpoint_id ?? '',
    });
    expect((await lg.alice.threads.getState<Chain>(copy.thread_id)).values.text).toBe('copy');
    expect(
      strip(await lg.alice.threads.getHistory<Chain>(thread.thread_id, { limit: 100 })),
    ).toEqual(strip(history));
    expect((await sdkFailure(lg.bob.threads.copy(thread.thread_id))).status).toBe(404);
  });

  it.each(['agent', 'agent:default'])(
    'runs two threads (%s) whose human message has the same id, as every reference-suite test sends it',
    async (graph) => {
      type Messages = { messages: { id: string; type: string; content: unknown }[] };
      const send = async (threadId: string, id: string, content: string) => {
        const run = await lg.alice.runs.create(threadId, graph, {
          input: { messages: [{ type: 'human', id, content }] },
        });
        const joined = (await lg.alice.runs.join(threadId, run.run_id)) as { __error__?: unknown };
        const { status } = await lg.alice.runs.get(threadId, run.run_id);
        // The joined values carry a failed run's error: the diff shows it.
        expect({ status, error: joined.__error__ }).toEqual({
          status: 'success',
          error: undefined,
        });
      };
      const threads = [await lg.alice.threads.create(), await lg.alice.threads.create()];
      for (const [index, thread] of threads.entries())
        await send(thread.thread_id, 'initial-message', `question ${index}`);
      for (const [index, thread] of threads.entries()) {
        const { values } = await lg.alice.threads.getState<Messages>(thread.thread_id);
        expect(values.messages[0]).toMatchObject({ type: 'human', content: `question ${index}` });
        // A user graph keeps the input's id (our agents give every input message their own).
        if (graph === 'agent') expect(values.messages[0]?.id).toBe('initial-message');
        expect(values.messages.at(-1)?.type).toBe('ai');
      }
      // A copy keeps every message id, and (our agent: the test graph's fake model answers one
      // turn only, always with the same tool call) runs on.
      const source = threads[0]?.thread_id ?? '';
      const copy = await lg.alice.threads.copy(source);
      const ids = async (threadId: string) =>
        (await lg.alice.threads.getState<Messages>(threadId)).values.messages.map((m) => m.id);
      expect(await ids(copy.thread_id)).toEqual(await ids(source));
      if (graph === 'agent:default') await send(copy.thread_id, 'second-message', 'again');
    },
  );

  it("copies an agent's thread with every checkpoint, its messages keeping their ids (as LangGraph's copy does)", async () => {
    const thread = await lg.alice.threads.create({ graphId: 'agent:default' });
    const human = (content: string) => ({ messages: [{ type: 'human', content }] });
    await lg.alice.runs.wait(thread.thread_id, 'agent:default', { input: human('one') });
    await lg.alice.runs.wait(thread.thread_id, 'agent:default', { input: human('two') });
    type Messages = { messages?: { id: string; content: unknown }[] };
    const history = await lg.alice.threads.getHistory<Messages>(thread.thread_id, { limit: 100 });
    const copy = await lg.alice.threads.copy(thread.thread_id);
    const copied = await lg.alice.threads.getHistory<Messages>(copy.thread_id, { limit: 100 });
    expect(copied.map((s) => s.checkpoint.checkpoint_id)).toEqual(
      history.map((s) => s.checkpoint.checkpoint_id),
    );
    const contents = (states: ThreadState<Messages>[]) =>
      states.map((s) => (s.values.messages ?? []).map((m) => m.content));
    expect(contents(copied)).toEqual(contents(history));
    // Message ids are per thread: every checkpoint of the copy holds the source's.
    const ids = (states: ThreadState<Messages>[]) =>
      states.map((s) => (s.values.messages ?? []).map((m) => m.id));
    expect(ids(copied)).toEqual(ids(history));
    expect(ids(copied).flat().length).toBeGreaterThan(0);
    // The copy runs on from its head like the source would.
    const values = (await lg.alice.runs.wait(copy.thread_id, 'agent:default', {
      input: human('three'),
    })) as { messages: { content: unknown }[] };
    expect(values.messages.map((m) => m.content)).toEqual([
      'one',
      'You said: one',
      'two',
      'You said: two',
      'three',
      'You said: three',
    ]);
  });

  it("prune keep_latest keeps each thread's head only: the state stays, the history is one checkpoint", async () => {
    const first = await lg.alice.threads.create();
    const second = await lg.alice.threads.create();
    await lg.alice.runs.wait(first.thread_id, 'chain', { input: { text: 'p' } });
    await lg.alice.runs.wait(second.thread_id, 'echo', { input: { text: 'q' } });
    const head = await lg.alice.threads.getState<Chain>(first.thread_id);
    expect(
      (await lg.alice.threads.getHistory(first.thread_id, { limit: 100 })).length,
    ).toBeGreaterThan(1);

    // Another tenant's thread is not theirs to prune.
    expect(await lg.bob.threads.prune([first.thread_id], { strategy: 'keep_latest' })).toEqual({
      pruned_count: 0,
    });
    expect(
      await lg.alice.threads.prune([first.thread_id, second.thread_id], {
        strategy: 'keep_latest',
      }),
    ).toEqual({ pruned_count: 2 });
    const history = await lg.alice.threads.getHistory<Chain>(first.thread_id, { limit: 100 });
    expect(history.map((s) => s.checkpoint.checkpoint_id)).toEqual([head.checkpoint.checkpoint_id]);
    expect(history[0]?.values).toEqual({ text: 'p+a', path: ['a', 'b', 'c'] });
    expect((await lg.alice.threads.get(first.thread_id)).values).toEqual(head.values);
    expect(await lg.alice.threads.getHistory(second.thread_id, { limit: 100 })).toHaveLength(1);
    // The thread goes on from its head.
    expect(await lg.alice.runs.wait(second.thread_id, 'echo', { input: { text: 'r' } })).toEqual({
      text: 'echo: r',
    });
  });
});
