import { randomUUID } from 'node:crypto';
import type { RunnableConfig } from '@langchain/core/runnables';
import type { CompiledUserGraph } from '../../user-graphs/user-graphs';

/** One chunk of a graph run, as its `graph` event records it. */
export interface GraphChunk {
  mode: string;
  namespace: string[];
  data: unknown;
}

/** The options a graph run streams with (LangGraph's `stream` options). */
export type GraphStreamOptions = RunnableConfig & {
  streamMode: string[];
  subgraphs: boolean;
  [key: string]: unknown;
};

/** One event of LangChain's `streamEvents` v2, as far as a graph run reads it. */
interface StreamEvent {
  event: string;
  run_id: string;
  tags?: string[];
  data: { chunk?: unknown };
}

/**
 * The chunks of a graph run. With `events` (the `events` stream mode, docs/langgraph-api.md)
 * the graph runs under LangChain's `streamEvents` v2, as LangGraph's server runs it: the root
 * run's `on_chain_stream` events carry the chunks of the other modes, and every other event
 * (`on_chain_start`, `on_chat_model_stream`, …) is itself a chunk of mode `events`. Without it,
 * the plain `stream`: the callbacks that make those events cost a run that does not ask for them.
 */
export async function* graphChunks(
  graph: CompiledUserGraph,
  start: unknown,
  options: GraphStreamOptions,
  events: boolean,
): AsyncGenerator<GraphChunk, void, undefined> {
  const asChunk = (raw: unknown): GraphChunk => {
    const [namespace, mode, data] = (options.subgraphs ? raw : [[], ...(raw as unknown[])]) as [
      string[],
      string,
      unknown,
    ];
    return { mode, namespace, data };
  };
  if (!events || graph.streamEvents === undefined) {
    for await (const chunk of await graph.stream(start, options)) yield asChunk(chunk);
    return;
  }
  // The root run's id, so its stream chunks are told from a nested runnable's.
  const root = randomUUID();
  const stream = graph.streamEvents(start, { ...options, runId: root, version: 'v2' });
  for await (const event of stream as AsyncIterable<StreamEvent>) {
    // What LangChain hides from tracing is hidden from the stream too, as LangGraph's server does.
    if (event.tags?.includes('langsmith:hidden')) continue;
    if (event.event === 'on_chain_stream' && event.run_id === root) {
      yield asChunk(event.data.chunk);
    } else {
      yield { mode: 'events', namespace: [], data: event };
    }
  }
}
