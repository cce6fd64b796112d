import { randomUUID } from 'node:crypto';
import { performance } from 'node:perf_hooks';
import { createTestDatabase } from '@cognition/storage-prisma/testing';
import type { BenchContext } from '../harness/types';
import type { TurnShape } from '../support/agent-server';
import { freePort } from '../support/server-process';
import { requirePeerPackage } from './install';
import type { OpenStream, PeerServer, PeerTurn } from './peer';
import { startPeerProcess } from './peer-process';

/** The agent id mastra-server.mjs registers, and the memory resource every thread belongs to. */
const AGENT = 'bench';
const RESOURCE = 'bench';

/** Mastra's nearest storages to ours: LibSQL on a SQLite file, and PostgreSQL. */
export type MastraStorage = 'libsql' | 'postgresql';

/** The fields of a Mastra stream chunk the benchmarks read. */
interface Chunk {
  type: string;
  payload?: { isError?: boolean; error?: unknown };
}

/** A streamed response of the client: the HTTP response and a reader of its chunks. */
interface MastraStreamResponse extends Response {
  processDataStream(options: { onChunk: (chunk: unknown) => Promise<void> }): Promise<void>;
}

/** The part of an agent of `@mastra/client-js` (1.47) the benchmarks call. */
interface MastraAgent {
  stream(
    prompt: string,
    options: { runId?: string; memory: { thread: string; resource: string } },
  ): Promise<MastraStreamResponse>;
  observe(params: { runId: string }): Promise<MastraStreamResponse>;
}

/**
 * The part of `@mastra/client-js`'s `MastraClient` (1.47) the benchmarks call. The client belongs
 * to the peers' package (tools/bench/peers, installed on first use), not to the repository, so it
 * is loaded at run time and typed here by what is used, with the client's own names and shapes.
 */
interface MastraClient {
  getAgent(agentId: string): MastraAgent;
  createMemoryThread(params: {
    title: string;
    resourceId: string;
    agentId: string;
  }): Promise<{ id: string }>;
}

interface MastraClientJs {
  MastraClient: new (options: { baseUrl: string; retries: number }) => MastraClient;
}

/**
 * Mastra (`@mastra/core` Agent with an `ls` tool and `@mastra/memory`, served by
 * `createNodeServer` of `@mastra/deployer`) on a fresh database, driven by `@mastra/client-js`.
 */
export async function startMastraPeer(
  ctx: BenchContext,
  options: { modelUrl: string; storage: MastraStorage },
): Promise<PeerServer> {
  const db = await createTestDatabase(options.storage === 'libsql' ? 'sqlite' : 'postgresql');
  try {
    const proc = await startPeerProcess(ctx, {
      script: 'mastra-server.mjs',
      name: `mastra-${options.storage}`,
      modelUrl: options.modelUrl,
      readyPath: '/health',
      env: {
        BENCH_PEER_PORT: String(await freePort()),
        BENCH_PEER_STORAGE_URL: db.provider === 'sqlite' ? `file:${db.path}` : db.url,
        MASTRA_TELEMETRY_DISABLED: '1',
      },
    });
    const clientJs = requirePeerPackage<MastraClientJs>(ctx.repoRoot, '@mastra/client-js');
    const client = new clientJs.MastraClient({ baseUrl: proc.url, retries: 0 });
    const agent = client.getAgent(AGENT);
    let stopped = false;
    return {
      label: `Mastra (${options.storage === 'libsql' ? 'LibSQL' : 'PostgreSQL'})`,
      pid: proc.pid,
      async newThread() {
        const thread = await client.createMemoryThread({
          title: 'bench',
          resourceId: RESOURCE,
          agentId: AGENT,
        });
        return thread.id;
      },
      async turn(thread, prompt) {
        const started = performance.now();
        const shape: TurnShape = { tokens: 0, toolCalls: 0, toolResultsOk: 0, terminal: 'none' };
        let ttftMs = 0;
        const response = await agent.stream(prompt, { memory: { thread, resource: RESOURCE } });
        await response.processDataStream({
          onChunk: (raw) => {
            const chunk = raw as Chunk;
            if (chunk.type === 'text-delta') {
              if (shape.tokens === 0) ttftMs = performance.now() - started;
              shape.tokens += 1;
            } else if (chunk.type === 'tool-call') {
              shape.toolCalls += 1;
            } else if (chunk.type === 'tool-result') {
              if (!chunk.payload?.isError) shape.toolResultsOk += 1;
            } else if (chunk.type === 'finish') {
              shape.terminal = 'done';
            } else if (chunk.type === 'error') {
              shape.terminal = `error: ${JSON.stringify(chunk.payload?.error)}`;
            }
            return Promise.resolve();
          },
        });
        return { shape, ttftMs, totalMs: performance.now() - started } satisfies PeerTurn;
      },
      async startIdleRun(thread) {
        // The run lives as long as the request that started it: that stream stays open (part of
        // the baseline), read in the background until the process stops; the idle streams
        // observe the run by the id given here.
        const runId = randomUUID();
        const response = await agent.stream('Hello?', {
          runId,
          memory: { thread, resource: RESOURCE },
        });
        response.processDataStream({ onChunk: () => Promise.resolve() }).catch(() => undefined);
        return () => observeIdle(client, runId);
      },
      async stop() {
        if (stopped) return;
        stopped = true;
        try {
          await proc.stop();
        } finally {
          await db.cleanup();
        }
      },
    };
  } catch (error) {
    await db.cleanup();
    throw error;
  }
}

/**
 * `observe` of the agent's run, resolved once the response (200, SSE) arrived: in trials Mastra
 * replayed none of the run's events (`start`, `step-start`) to an observer, so the headers are
 * the sign that the server set the stream up. The body is drained in the background until
 * `close` cancels it.
 */
async function observeIdle(client: MastraClient, runId: string): Promise<OpenStream> {
  const response = await client.getAgent(AGENT).observe({ runId });
  if (response.status !== 200 || !response.body) {
    throw new Error(`observe of run ${runId} answered ${response.status}`);
  }
  const reader = response.body.getReader();
  const drain = async (): Promise<void> => {
    for (;;) if ((await reader.read()).done) return;
  };
  // Ends with an error when `close` cancels the body: expected, nothing to report.
  drain().catch(() => undefined);
  return { close: () => void reader.cancel().catch(() => undefined) };
}
