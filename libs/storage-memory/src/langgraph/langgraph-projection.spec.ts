import type { StorageBackend } from '@cognition/storage';
import { AIMessage, HumanMessage } from '@langchain/core/messages';
import { END, MessagesAnnotation, START, StateGraph } from '@langchain/langgraph';
import { createMemoryStorage } from '../memory-storage';

/** A one-node agent whose "model" answers with a fixed id so rows can be asserted exactly. */
function chatGraph(backend: StorageBackend, answer: (question: string) => AIMessage) {
  return new StateGraph(MessagesAnnotation)
    .addNode('model', (state) => {
      const question = state.messages[state.messages.length - 1]?.text ?? '';
      if (question === 'explode') throw new Error('model failed');
      return { messages: [answer(question)] };
    })
    .addEdge(START, 'model')
    .addEdge('model', END)
    .compile({ checkpointer: backend.checkpointer });
}

describe('memory backend with a real LangGraph graph', () => {
  it('projects each turn of a compiled graph, adopting the pending user input in place', async () => {
    const backend = createMemoryStorage();
    await backend.initialize();
    const session = await backend.sessions.create({}, { user: 'alice' });
    let turn = 0;
    const graph = chatGraph(backend, (question) => {
      turn += 1;
      return new AIMessage({
        id: `answer-${turn}`,
        content: `echo ${question}`,
        usage_metadata: { input_tokens: 3, output_tokens: 2, total_tokens: 5 },
        response_metadata: { model_name: 'fake-model' },
      });
    });
    const config = { configurable: { thread_id: session.threadId } };

    const input = await backend.messages.create({
      id: 'q-1',
      sessionId: session.id,
      role: 'user',
      content: 'one',
    });
    await graph.invoke({ messages: [new HumanMessage({ id: 'q-1', content: 'one' })] }, config);
    await backend.messages.create({
      id: 'q-2',
      sessionId: session.id,
      role: 'user',
      content: 'two',
    });
    await graph.invoke({ messages: [new HumanMessage({ id: 'q-2', content: 'two' })] }, config);

    const rows = await backend.messages.listAll(session.id, {});
    expect(rows.map((m) => [m.id, m.role, m.content, m.parentId])).toEqual([
      ['q-1', 'user', 'one', null],
      ['answer-1', 'assistant', 'echo one', 'q-1'],
      ['q-2', 'user', 'two', null],
      ['answer-2', 'assistant', 'echo two', 'q-2'],
    ]);
    expect(rows[0]?.createdAt.getTime()).toBe(input.createdAt.getTime());
    expect(rows[1]).toMatchObject({ tokenCount: 2, modelUsed: 'fake-model' });
    expect((await backend.sessions.get(session.id, {}))?.messageCount).toBe(4);
    expect(await backend.rebuildMessageProjection(session.id)).toEqual({ messages: 4 });
    expect(await backend.messages.listAll(session.id, {})).toEqual(rows);
  });

  it('keeps the projection equal to the latest checkpoint when a turn fails midway', async () => {
    const backend = createMemoryStorage();
    const session = await backend.sessions.create({}, {});
    const graph = chatGraph(backend, () => new AIMessage({ id: 'never', content: 'x' }));
    await backend.messages.create({
      id: 'q-boom',
      sessionId: session.id,
      role: 'user',
      content: 'explode',
    });
    await expect(
      graph.invoke(
        { messages: [new HumanMessage({ id: 'q-boom', content: 'explode' })] },
        { configurable: { thread_id: session.threadId } },
      ),
    ).rejects.toThrow('model failed');
    const rows = await backend.messages.listAll(session.id, {});
    expect(rows.map((m) => m.id)).toEqual(['q-boom']);
    await backend.initialize();
    expect(await backend.messages.listAll(session.id, {})).toEqual(rows);
  });
});
