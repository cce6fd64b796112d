import { performance } from 'node:perf_hooks';
import type { BenchContext } from '../harness/types';
import type { TurnShape } from '../support/agent-server';
import { requirePeerPackage } from './install';
import type { OpenStream, PeerServer, PeerTurn } from './peer';
import { startPeerProcess } from './peer-process';

/** The graph id langgraph-server.mjs registers. */
const ASSISTANT = 'agent';
/** Run workers of the server by default: `langgraph dev`'s default `--n-jobs-per-worker`. */
export const LANGGRAPH_WORKERS = 10;

/** An event of a run's stream (`StreamPart`, narrowed by the event where it is read). */
export interface StreamPart {
  event: string;
  data: unknown;
}

/**
 * The part of `@langchain/langgraph-sdk`'s `Client` (1.15) the benchmarks call. The SDK belongs to
 * the peers' package (tools/bench/peers, installed on first use), not to the repository, so it is
 * loaded at run time and typed here by what is used, with the SDK's own names and shapes.
 */
export interface LangGraphClient {
  threads: { create(): Promise<{ thread_id: string }> };
  runs: {
    stream(
      thread: string,
      assistant: string,
      payload: { input: unknown; streamMode: 'messages-tuple' | ('messages-tuple' | 'custom')[] },
    ): AsyncIterable<StreamPart>;
    create(
      thread: string,
      assistant: string,
      payload: { input: unknown; streamMode: 'messages-tuple'[]; streamResumable: boolean },
    ): Promise<{ run_id: string }>;
    joinStream(
      thread: string,
      runId: string,
      options: { signal: AbortSignal; lastEventId: string },
    ): AsyncIterable<StreamPart>;
  };
}

interface LangGraphSdk {
  Client: new (config: { apiUrl: string }) => LangGraphClient;
}

/** The official SDK's `Client` (the peers' copy of `@langchain/langgraph-sdk`) for `apiUrl`. */
export function langGraphClient(repoRoot: string, apiUrl: string): LangGraphClient {
  const sdk = requirePeerPackage<LangGraphSdk>(repoRoot, '@langchain/langgraph-sdk');
  return new sdk.Client({ apiUrl });
}

/** A `messages-tuple` part: the message (chunk) and its metadata. */
export type MessageTuple = [
  {
    type?: string;
    content?: unknown;
    status?: string;
    tool_call_chunks?: { name?: string | null }[];
  },
  { langgraph_node?: string },
];

/**
 * The LangGraph.js API server (`@langchain/langgraph-api` 's `startServer`, what `langgraph dev`
 * serves: in-memory storage, no auth) with the graph of langgraph-graph.mjs, driven by
 * `@langchain/langgraph-sdk`.
 */
export async function startLangGraphPeer(
  ctx: BenchContext,
  options: {
    modelUrl: string;
    /** Runs executed at once (`--n-jobs-per-worker`); the rest wait in its queue. */
    workers?: number;
  },
): Promise<PeerServer & { url: string }> {
  const proc = await startPeerProcess(ctx, {
    script: 'langgraph-server.mjs',
    name: 'langgraph',
    modelUrl: options.modelUrl,
    readyPath: '/ok',
    env: {
      BENCH_PEER_WORKERS: String(options.workers ?? LANGGRAPH_WORKERS),
      LANGSMITH_TRACING: 'false',
    },
  });
  const client = langGraphClient(ctx.repoRoot, proc.url);
  return {
    label: 'LangGraph API server (in-memory)',
    url: proc.url,
    pid: proc.pid,
    async newThread() {
      return (await client.threads.create()).thread_id;
    },
    async turn(thread, prompt) {
      const started = performance.now();
      const shape: TurnShape = { tokens: 0, toolCalls: 0, toolResultsOk: 0, terminal: 'none' };
      let ttftMs = 0;
      const stream = client.runs.stream(thread, ASSISTANT, {
        input: { messages: [{ role: 'user', content: prompt }] },
        streamMode: 'messages-tuple',
      });
      for await (const part of stream) {
        if (part.event === 'error') {
          shape.terminal = `error: ${JSON.stringify(part.data)}`;
        } else if (part.event === 'messages') {
          const [message, metadata] = part.data as MessageTuple;
          if (message.type === 'tool') {
            if (message.status !== 'error') shape.toolResultsOk += 1;
          } else if (metadata.langgraph_node === 'agent') {
            shape.toolCalls += (message.tool_call_chunks ?? []).filter((c) => c.name).length;
            if (typeof message.content === 'string' && message.content !== '') {
              if (shape.tokens === 0) ttftMs = performance.now() - started;
              shape.tokens += 1;
            }
          }
        }
      }
      if (shape.terminal === 'none') shape.terminal = 'done';
      return { shape, ttftMs, totalMs: performance.now() - started } satisfies PeerTurn;
    },
    async startIdleRun(thread) {
      const run = await client.runs.create(thread, ASSISTANT, {
        input: { messages: [{ role: 'user', content: 'Hello?' }] },
        streamMode: ['messages-tuple'],
        streamResumable: true,
      });
      return () => joinIdle(client, thread, run.run_id);
    },
    stop: () => proc.stop(),
  };
}

/**
 * `runs.joinStream` of a run, resolved once its first event (the replayed `metadata` of the
 * resumable run) arrived; the stream is then drained in the background until `close` aborts it.
 */
async function joinIdle(
  client: LangGraphClient,
  thread: string,
  runId: string,
): Promise<OpenStream> {
  const controller = new AbortController();
  const stream = client.runs
    .joinStream(thread, runId, {
      signal: controller.signal,
      lastEventId: '-1',
    })
    [Symbol.asyncIterator]();
  const first = await stream.next();
  if (first.done) throw new Error(`the joined stream of run ${runId} ended at once`);
  const drain = async (): Promise<void> => {
    for (;;) if ((await stream.next()).done) return;
  };
  // Ends with an AbortError when `close` aborts: expected, nothing to report.
  drain().catch(() => undefined);
  return { close: () => controller.abort() };
}
