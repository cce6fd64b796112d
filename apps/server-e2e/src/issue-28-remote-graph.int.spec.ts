import { randomUUID } from 'node:crypto';
import type { BaseMessage } from '@langchain/core/messages';
import { Command, isGraphInterrupt } from '@langchain/langgraph';
import { RemoteGraph } from '@langchain/langgraph/remote';
import { langGraphServerForSpec } from './testing/langgraph-sdk';
import { sqliteServerDatabase } from './testing/postgres';

/**
 * `RemoteGraph` of `@langchain/langgraph/remote` (issue 28): a graph on our server used as if it
 * were local — invoked on a thread it names, its state and history read, streamed, interrupted
 * and resumed with a `Command`, started at a node with `goto` — through the SDK client it wraps,
 * against the built server (SQLite).
 */
const ALICE = 'e2e-remote-graph-alice-0123456789';
const BOB = 'e2e-remote-graph-bob-0123456789';

type Answer = { messages: BaseMessage[] | { content: unknown }[] };

describe('RemoteGraph against the LangGraph API (issue 28)', () => {
  const lg = langGraphServerForSpec(
    { alice: ALICE, bob: BOB },
    () => sqliteServerDatabase('cognition-e2e-remote-graph-'),
    'cognition-e2e-remote-graph-ws-',
  );

  const remote = (graphId: string, client = lg.alice) => new RemoteGraph({ graphId, client });
  const onThread = (threadId: string) => ({ configurable: { thread_id: threadId } });

  it('invokes a tool loop on a thread it creates', async () => {
    // A thread id the server has never seen: RemoteGraph asks for it to be created.
    const threadId = randomUUID();
    const result = (await remote('agent').invoke(
      { messages: [{ role: 'user', content: 'weather in Paris?' }] },
      onThread(threadId),
    )) as Answer;
    expect(result.messages.map((m) => m.content).at(-1)).toBe('The weather: sunny in Paris');
    const thread = await lg.alice.threads.get(threadId);
    expect(thread.status).toBe('idle');
    expect(((thread.values ?? {}) as Answer).messages).toHaveLength(4);
  });

  it("reads a thread's state and its history of checkpoints", async () => {
    const threadId = randomUUID();
    const agent = remote('agent');
    await agent.invoke(
      { messages: [{ role: 'user', content: 'weather in Paris?' }] },
      onThread(threadId),
    );
    const state = await agent.getState(onThread(threadId));
    expect((state.values as Answer).messages).toHaveLength(4);
    expect(state.config.configurable?.['thread_id']).toBe(threadId);
    const history = [];
    for await (const snapshot of agent.getStateHistory(onThread(threadId))) history.push(snapshot);
    // Newest first, back to the input: every step of the loop has its checkpoint.
    expect(history.length).toBeGreaterThanOrEqual(4);
    expect(history[0]?.config.configurable?.['checkpoint_id']).toBe(
      state.config.configurable?.['checkpoint_id'],
    );
  });

  it("never makes a thread under another tenant's thread id (404)", async () => {
    const thread = await lg.alice.threads.create();
    const refused = await remote('echo', lg.bob)
      .invoke({ text: 'mine now' }, onThread(thread.thread_id))
      .then(
        () => null,
        (error: unknown) => error as { status?: number; text?: string },
      );
    expect(refused).toMatchObject({
      status: 404,
      text: JSON.stringify({ detail: 'Thread not found' }),
    });
    expect((await lg.alice.threads.getState(thread.thread_id)).values).toEqual({});
  });

  it('starts at the node a Command goes to, with its update', async () => {
    const thread = await lg.alice.threads.create();
    const result: unknown = await remote('echo').invoke(
      new Command({ update: { text: 'jumped' }, goto: 'echo' }),
      onThread(thread.thread_id),
    );
    expect(result).toEqual({ text: 'echo: jumped' });
  });

  it('streams the updates of each node in order', async () => {
    const thread = await lg.alice.threads.create();
    const updates: Record<string, unknown>[] = [];
    for await (const chunk of await remote('agent').stream(
      { messages: [{ role: 'user', content: 'weather in Paris?' }] },
      { ...onThread(thread.thread_id), streamMode: 'updates' },
    )) {
      updates.push(chunk as Record<string, unknown>);
    }
    expect(updates.map((u) => Object.keys(u))).toEqual([['model'], ['tools'], ['model']]);
  });

  it('raises the interrupt of a graph that asks a person, and resumes it with a Command', async () => {
    const thread = await lg.alice.threads.create();
    const approval = remote('approval');
    const asked = await approval.invoke({ request: 'deploy' }, onThread(thread.thread_id)).then(
      () => null,
      (error: unknown) => error,
    );
    expect(isGraphInterrupt(asked)).toBe(true);
    expect((await lg.alice.threads.get(thread.thread_id)).status).toBe('interrupted');

    const resumed: unknown = await approval.invoke(
      new Command({ resume: 'yes' }),
      onThread(thread.thread_id),
    );
    expect(resumed).toEqual({ request: 'deploy', answer: 'deploy: yes' });
    expect((await lg.alice.threads.get(thread.thread_id)).status).toBe('idle');
  });
});
