import { readFileSync } from 'node:fs';
import { mkdtemp } from 'node:fs/promises';
import path from 'node:path';
import { createCognitionClient, streamMessage } from '@cognition/client';
import type { AgentEvent, CognitionClient } from '@cognition/client';
import type {
  FakeCompletion,
  FakeOpenAIServer,
  RecordedRequest,
} from '@cognition/runtime/testing/http';
import { createTestDatabase } from '@cognition/storage-prisma/testing';
import type { BenchContext } from '../harness/types';
import type { BenchServer } from './server-process';
import { ensureServerBuilt, serverEnvFor, startServer } from './server-process';

/** The model name the built server asks the fake provider for. */
export const BENCH_MODEL = 'bench-model';

/** `memory`: the in-process storage backend, no database (to separate storage from the rest). */
export type AgentServerProvider = 'sqlite' | 'postgresql' | 'memory';

/** The turn of benchmarks 1 and 3: this prompt, one `ls` tool call, then a 50-word answer. */
export const TURN_PROMPT = 'List the files of the workspace, then answer.';
export const TURN_ANSWER_TOKENS = 50;

/** `count` words of answer text; the fake model streams a string word by word (one chunk each). */
export function answerText(count: number): string {
  return Array.from({ length: count }, (_, i) => `word${i + 1}`).join(' ');
}

/**
 * The fake model's reply to a turn of one tool call and a `words`-token answer, decided from the
 * request alone so it serves any number of turns and conversations at once: a request whose last
 * message is a tool result gets the answer, any other request asks for `ls` of the workspace
 * root (a tool every built-in agent has, answered by the sandbox without a process).
 */
export function toolThenAnswer(words: number): (request: RecordedRequest) => FakeCompletion {
  const text = answerText(words);
  return (request) => {
    const messages = request.body.messages ?? [];
    return messages[messages.length - 1]?.role === 'tool'
      ? { text }
      : { toolCalls: [{ name: 'ls', args: {} }] };
  };
}

/** What one turn produced, as counts of its events and how it ended. */
export interface TurnShape {
  /** Words of the streamed answer (the fake model sends one token per word). */
  tokens: number;
  toolCalls: number;
  /** Tool results with exit code 0. */
  toolResultsOk: number;
  /** `done`, `error <code>: <message>`, or `none` while no terminal event was seen. */
  terminal: string;
}

export function shapeOf(events: readonly AgentEvent[]): TurnShape {
  const shape: TurnShape = { tokens: 0, toolCalls: 0, toolResultsOk: 0, terminal: 'none' };
  let text = '';
  for (const event of events) {
    if (event.type === 'token') text += event.content;
    else if (event.type === 'tool_call') shape.toolCalls += 1;
    else if (event.type === 'tool_result' && event.exit_code === 0) shape.toolResultsOk += 1;
    else if (event.type === 'done') shape.terminal = 'done';
    else if (event.type === 'error') shape.terminal = `error ${event.code}: ${event.message}`;
  }
  // Words of the answer, not token events: a client that falls behind gets tokens merged.
  shape.tokens = text.split(/\s+/).filter((word) => word !== '').length;
  return shape;
}

/**
 * Why `shape` is not the turn {@link toolThenAnswer} scripts (one successful tool call, then a
 * `words`-token answer, then `done`); null when it is.
 */
export function turnProblem(shape: TurnShape, words: number): string | null {
  if (shape.terminal !== 'done') return `the turn ended with ${shape.terminal}`;
  if (shape.tokens !== words || shape.toolCalls !== 1 || shape.toolResultsOk !== 1) {
    return `expected 1 successful tool call and ${words} tokens, got ${JSON.stringify(shape)}`;
  }
  return null;
}

/**
 * One turn as a client sees it: `streamMessage` of the typed client (send, then the run's events
 * until its terminal one). Rejects as `streamMessage` does (the send's or the subscription's
 * `TRPCClientError`, a stream that ended early, `signal.reason`).
 */
export async function streamTurn(
  client: CognitionClient,
  sessionId: string,
  content: string,
  signal?: AbortSignal,
): Promise<TurnShape> {
  const events: AgentEvent[] = [];
  const stream = streamMessage(client, { sessionId, content }, signal ? { signal } : {});
  for await (const envelope of stream) events.push(envelope.event);
  return shapeOf(events);
}

export interface AgentServerOptions {
  provider: AgentServerProvider;
  /** The zero-latency scripted model the server calls as its `openai_compatible` provider. */
  fake: FakeOpenAIServer;
  /** More COGNITION_* settings; they win over the ones set here. */
  env?: Record<string, string>;
  /** More Node flags for the server process (e.g. `heapProbe`). */
  nodeArgs?: readonly string[];
}

export interface AgentServer {
  server: BenchServer;
  /** The typed client of `@cognition/client`, pointed at `<url>/trpc`. */
  client: CognitionClient;
  /** e.g. `http://127.0.0.1:41234` (REST and SSE routes hang off it). */
  url: string;
  /** Stops the server, then drops its database. Idempotent. */
  cleanup(): Promise<void>;
}

/**
 * The server settings that make it talk to `fake` as its `openai_compatible` provider over
 * loopback, as an operator would point it at Ollama or vLLM.
 */
export function fakeProviderEnv(fake: FakeOpenAIServer): Record<string, string> {
  return {
    COGNITION_LLM_PROVIDER: 'openai_compatible',
    COGNITION_LLM_MODEL: BENCH_MODEL,
    COGNITION_OPENAI_COMPATIBLE_BASE_URL: fake.baseUrl,
  };
}

/**
 * The built server on a fresh database (`createTestDatabase`; none for `memory`) and a fresh
 * workspace under `ctx.tmpDir`, wired to the fake model, with a typed client. Builds the server
 * if needed. Whatever was created is released again if the start fails.
 */
export async function startAgentServer(
  ctx: BenchContext,
  options: AgentServerOptions,
): Promise<AgentServer> {
  await ensureServerBuilt(ctx.repoRoot);
  const db =
    options.provider === 'memory'
      ? { cleanup: () => Promise.resolve() }
      : await createTestDatabase(options.provider);
  try {
    const workspace = await mkdtemp(path.join(ctx.tmpDir, `workspace-${options.provider}-`));
    const storageEnv =
      'provider' in db
        ? serverEnvFor(db, workspace)
        : { COGNITION_WORKSPACE_ROOT: workspace, COGNITION_PERSISTENCE_BACKEND: 'memory' };
    const server = await startServer({
      repoRoot: ctx.repoRoot,
      env: { ...storageEnv, ...fakeProviderEnv(options.fake), ...options.env },
      profileDir: ctx.profileDir,
      ...(options.nodeArgs ? { nodeArgs: options.nodeArgs } : {}),
    });
    const client = createCognitionClient({ url: `${server.url}/trpc` });
    let cleaned = false;
    return {
      server,
      client,
      url: server.url,
      async cleanup() {
        if (cleaned) return;
        cleaned = true;
        try {
          await server.stop();
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

export interface RssFigures {
  /** Resident set size now (VmRSS), bytes. */
  current: number;
  /** The highest resident set size since the process started (VmHWM), bytes. */
  peak: number;
}

/**
 * Resident memory of process `pid` from /proc/<pid>/status (Linux). The peak is the kernel's
 * high-water mark, so it catches spikes between two samples.
 * @throws Error when /proc has no such process or lacks the fields (not Linux).
 */
export function serverRssBytes(pid: number): RssFigures {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8');
  const kib = (field: string): number => {
    const match = new RegExp(`^${field}:\\s+(\\d+)\\s+kB$`, 'm').exec(status);
    if (!match?.[1]) throw new Error(`/proc/${pid}/status has no ${field} line`);
    return Number(match[1]) * 1024;
  };
  return { current: kib('VmRSS'), peak: kib('VmHWM') };
}
