// The user graphs of the LangGraph API specs (issue 28), loaded by the built server from the
// langgraph.json beside this file.
import { appendFileSync, existsSync } from 'node:fs';
import path, { join } from 'node:path';
import { AIMessage, AIMessageChunk } from '@langchain/core/messages';
import type { BaseMessage } from '@langchain/core/messages';
import { tool } from '@langchain/core/tools';
import { FakeListChatModel, FakeStreamingChatModel } from '@langchain/core/utils/testing';
import {
  Annotation,
  END,
  MessagesAnnotation,
  START,
  StateGraph,
  interrupt,
} from '@langchain/langgraph';
import type { LangGraphRunnableConfig } from '@langchain/langgraph';
import { ToolNode } from '@langchain/langgraph/prebuilt';
import { z } from 'zod';
import { STORY, STORY_WORDS_BEFORE_GATE } from './story';

const State = Annotation.Root({ text: Annotation<string> });

/** One node that echoes its input. */
export const echo = new StateGraph(State)
  .addNode('echo', (state: typeof State.State) => ({ text: `echo: ${state.text}` }))
  .addEdge(START, 'echo')
  .addEdge('echo', END)
  .compile();

/** Greets with its configuration: `configurable.greeting` and `.mark` (an assistant's or a run's). */
export const greeter = new StateGraph(State)
  .addNode('greet', (state: typeof State.State, config: LangGraphRunnableConfig) => {
    const configurable = config.configurable ?? {};
    const greeting = String(configurable['greeting'] ?? 'hello');
    return { text: `${greeting} ${state.text}${String(configurable['mark'] ?? '')}` };
  })
  .addEdge(START, 'greet')
  .addEdge('greet', END)
  .compile();

const weather = tool(({ city }: { city: string }) => `sunny in ${city}`, {
  name: 'get_weather',
  description: 'The weather in a city',
  schema: z.object({ city: z.string() }),
});

/**
 * The fake model: asks for the weather once (saying so on the `custom` stream), then answers
 * from the tool's result.
 */
async function model(
  state: typeof MessagesAnnotation.State,
  config: LangGraphRunnableConfig,
): Promise<{ messages: BaseMessage[] }> {
  const last = state.messages.at(-1);
  if (last?.getType() === 'tool') {
    const answer = new FakeListChatModel({ responses: [`The weather: ${last.text}`] });
    return { messages: [await answer.invoke(state.messages)] };
  }
  config.writer?.({ step: 'asking for the weather' });
  const call = { id: 'call_1', name: 'get_weather', args: { city: 'Paris' } };
  return { messages: [new AIMessage({ content: '', tool_calls: [call] })] };
}

/** A tool loop: model → tools → model, on the fake model. */
export const agent = new StateGraph(MessagesAnnotation)
  .addNode('model', model)
  .addNode('tools', new ToolNode([weather]))
  .addEdge(START, 'model')
  .addConditionalEdges('model', (state) =>
    (state.messages.at(-1) as AIMessage).tool_calls?.length ? 'tools' : END,
  )
  .addEdge('tools', 'model')
  .compile();

const Approval = Annotation.Root({ request: Annotation<string>, answer: Annotation<string> });

/** Asks a person (`interrupt()`), then records their answer. */
export const approval = new StateGraph(Approval)
  .addNode('ask', (state: typeof Approval.State) => {
    const answer = interrupt<{ question: string }, string>({
      question: `approve ${state.request}?`,
    });
    return { answer: `${state.request}: ${answer}` };
  })
  .addEdge(START, 'ask')
  .addEdge('ask', END)
  .compile();

const Steps = Annotation.Root({
  dir: Annotation<string>,
  done: Annotation<string[]>({ reducer: (a, b) => a.concat(b), default: () => [] }),
});

/**
 * Two steps, each appending its name to `<dir>/log` when it runs; the second waits until
 * `<dir>/release` exists (the crash spec kills the server meanwhile).
 */
export const steps = new StateGraph(Steps)
  .addNode('first', (state: typeof Steps.State) => {
    appendFileSync(join(state.dir, 'log'), 'first\n');
    return { done: ['first'] };
  })
  .addNode('second', async (state: typeof Steps.State) => {
    appendFileSync(join(state.dir, 'log'), 'second\n');
    while (!existsSync(join(state.dir, 'release'))) {
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
    return { done: ['second'] };
  })
  .addEdge(START, 'first')
  .addEdge('first', 'second')
  .addEdge('second', END)
  .compile();

/**
 * Long-term memory through the run's store (`config.store`): keeps the input as a note under
 * `["memories"]` and answers every note the store holds there, oldest first.
 */
export const notes = new StateGraph(State)
  .addNode('remember', async (state: typeof State.State, config: LangGraphRunnableConfig) => {
    const store = config.store;
    if (!store) throw new Error('the run has no store');
    const existing = await store.search(['memories'], { limit: 100 });
    await store.put(['memories'], `note-${existing.length + 1}`, { text: state.text });
    const all = await store.search(['memories'], { limit: 100 });
    const texts = all
      .sort((a, b) => a.key.localeCompare(b.key))
      .map((item) => String(item.value['text']));
    return { text: texts.join(' | ') };
  })
  .addEdge(START, 'remember')
  .addEdge('remember', END)
  .compile();

const Chain = Annotation.Root({
  text: Annotation<string>,
  path: Annotation<string[]>({ reducer: (a, b) => a.concat(b), default: () => [] }),
});

/**
 * Three nodes in a row, each appending its name to `path` (`a` also tags the text): what
 * `interrupt_before` / `interrupt_after` stop between and time travel forks from.
 */
export const chain = new StateGraph(Chain)
  .addNode('a', (state: typeof Chain.State) => ({ text: `${state.text}+a`, path: ['a'] }))
  .addNode('b', () => ({ path: ['b'] }))
  .addNode('c', () => ({ path: ['c'] }))
  .addEdge(START, 'a')
  .addEdge('a', 'b')
  .addEdge('b', 'c')
  .addEdge('c', END)
  .compile();

/**
 * A chat graph on a fake streaming model: answers `STORY` word by word (message tuples carry the
 * words). With `configurable.gate` (a folder), it stops after `STORY_WORDS_BEFORE_GATE` words
 * until `<gate>/release` exists, so a test can reload a page or kill the server mid-answer; a
 * line `words` is appended to `<gate>/log` each time the model starts (a resumed run starts over).
 */
export const story = new StateGraph(MessagesAnnotation)
  .addNode(
    'write',
    async (state: typeof MessagesAnnotation.State, config: LangGraphRunnableConfig) => {
      const gate = config.configurable?.['gate'] as string | undefined;
      if (gate) appendFileSync(join(gate, 'log'), 'words\n');
      const words = STORY.split(/(?<= )/);
      const model = new FakeStreamingChatModel({
        sleep: 0,
        chunks: words.map((word) => new AIMessageChunk({ content: word })),
      });
      let answer: AIMessageChunk | undefined;
      let count = 0;
      for await (const chunk of await model.stream(state.messages, config)) {
        answer = answer ? answer.concat(chunk) : chunk;
        count += 1;
        if (gate && count === STORY_WORDS_BEFORE_GATE) {
          while (!existsSync(join(gate, 'release'))) {
            await new Promise((resolve) => setTimeout(resolve, 20));
          }
        }
      }
      return { messages: [new AIMessage({ id: answer?.id, content: answer?.text ?? '' })] };
    },
  )
  .addEdge(START, 'write')
  .addEdge('write', END)
  .compile();

/**
 * Written the way the LangGraph.js server's own test graphs are (issue 28's reference suite): a
 * default import of a CommonJS built-in (`path`), the Runtime API's `runtime.context`, and the
 * export a promise of the compiled graph.
 */
export const runtime = Promise.resolve(
  new StateGraph(State)
    .addNode(
      'use_context',
      (state: typeof State.State, config: { context?: { model?: string } }) => ({
        text: `${path.basename(state.text)} ${String(config.context?.model)}`,
      }),
    )
    .addEdge(START, 'use_context')
    .addEdge('use_context', END)
    .compile(),
);

const Draft = Annotation.Root({
  topic: Annotation<string>,
  notes: Annotation<string[]>({ reducer: (a, b) => a.concat(b), default: () => [] }),
});

/** The subgraph of `nested`: one node drafting a note on the topic. */
const drafting = new StateGraph(Draft)
  .addNode('draft', (state: typeof Draft.State) => ({ notes: [`draft on ${state.topic}`] }))
  .addEdge(START, 'draft')
  .addEdge('draft', END)
  .compile();

/** A zod state (its JSON Schemas are the graph's own) with a subgraph as its first node. */
const Topic = z.object({
  topic: z.string().describe('what to write about'),
  notes: z.array(z.string()).default([]),
});
export const nested = new StateGraph(Topic)
  .addNode('research', drafting)
  .addNode('finish', (state: z.infer<typeof Topic>) => ({ notes: [...state.notes, 'done'] }))
  .addEdge(START, 'research')
  .addEdge('research', 'finish')
  .addEdge('finish', END)
  .compile();

/** What `failing` throws: an exception of its own class, as the reference suite's `error` graph. */
class CustomError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'CustomError';
  }
}

/** One node that throws `CustomError("Boo!")`. */
export const failing = new StateGraph(MessagesAnnotation)
  .addNode('error_node', () => {
    throw new CustomError('Boo!');
  })
  .addEdge(START, 'error_node')
  .compile();
