import { performance } from 'node:perf_hooks';
import { streamMessage } from '@cognition/client';
import type { CognitionClient } from '@cognition/client';
import { FakeOpenAIServer, parseSseBlocks } from '@cognition/runtime/testing/http';
import { compare, formatMs, formatRate, median } from '../harness/stats';
import type { Benchmark, BenchContext, ResultRow } from '../harness/types';
import type { PeerServer } from '../peers/peer';
import type { PeerName } from '../peers/start';
import { startPeers, stopPeers } from '../peers/start';
import { BENCH_MODEL, startAgentServer } from '../support/agent-server';
import { modelClientCpuUsPerChunk } from '../support/model-client-cpu';
import { processCpuMs } from '../support/process-cpu';
import { startSseFloor } from '../support/sse-floor';

/** Token i of the answer is `WORDS[i % WORDS.length]`: short words, like a model's tokens. */
const WORDS = [' the', ' quick', ' brown', ' fox', ' jumps', ' over', ' a', ' lazy', ' dog.'];
const PROMPT = 'Write a very long answer.';
/** Room in the replay buffer for a run's other events (status, usage, status, done). */
const OTHER_EVENTS = 16;

export interface StreamTiming {
  /** ms from the send to the first token event received. */
  ttftMs: number;
  /** ms from the send to the `done` event received. */
  totalMs: number;
  /** Model tokens received: the server merges the tokens a client has not read yet. */
  tokens: number;
}

/** Tokens in `content`: each of {@link WORDS} starts with its only space. */
function tokensIn(content: string): number {
  let count = 0;
  for (let i = content.indexOf(' '); i !== -1; i = content.indexOf(' ', i + 1)) count += 1;
  return count;
}

/** Fails a repetition that did not deliver every token: its rate would flatter us. */
function checkTokens(label: string, timing: StreamTiming, expected: number): StreamTiming {
  if (timing.tokens !== expected) {
    throw new Error(`${label}: ${timing.tokens} tokens arrived, ${expected} were sent`);
  }
  return timing;
}

/**
 * The REST client, for our `POST /sessions/{id}/messages` and for the floor alike: fetch, read
 * the body as it arrives, count the tokens of `event: token` blocks until `done`, then read to the end so the
 * connection goes back to the pool.
 */
export async function readTokenStream(url: string, body: unknown): Promise<StreamTiming> {
  const started = performance.now();
  const response = await fetch(url, {
    method: 'POST',
    headers: { 'Content-Type': 'application/json' },
    body: JSON.stringify(body),
  });
  if (response.status !== 200 || !response.body) {
    throw new Error(`POST ${url} answered ${response.status}: ${await response.text()}`);
  }
  const reader = (response.body as ReadableStream<Uint8Array>).getReader();
  const decoder = new TextDecoder();
  let buffer = '';
  let tokens = 0;
  let ttftMs = 0;
  let totalMs: number | undefined;
  for (;;) {
    const { value, done } = await reader.read();
    if (done) break;
    buffer += decoder.decode(value, { stream: true });
    const parsed = parseSseBlocks(buffer);
    buffer = parsed.rest;
    for (const frame of parsed.frames) {
      if (frame.event === 'token') {
        if (tokens === 0) ttftMs = performance.now() - started;
        tokens += tokensIn((JSON.parse(frame.data ?? '{}') as { content?: string }).content ?? '');
      } else if (frame.event === 'done') {
        totalMs ??= performance.now() - started;
      } else if (frame.event === 'error') {
        throw new Error(`POST ${url}: the run failed: ${frame.data ?? ''}`);
      }
    }
  }
  if (totalMs === undefined) throw new Error(`POST ${url}: the stream ended without \`done\``);
  return { ttftMs, totalMs, tokens };
}

/** The typed client: `streamMessage` (one `messages.stream` request) until `done`. */
async function streamTrpc(client: CognitionClient, sessionId: string): Promise<StreamTiming> {
  const started = performance.now();
  let tokens = 0;
  let ttftMs = 0;
  for await (const { event } of streamMessage(client, { sessionId, content: PROMPT })) {
    if (event.type === 'token') {
      if (tokens === 0) ttftMs = performance.now() - started;
      tokens += tokensIn(event.content);
    } else if (event.type === 'error') {
      throw new Error(`tRPC: the run failed: ${event.code} ${event.message}`);
    }
  }
  // streamMessage returns right after the terminal event, which was not an error.
  return { ttftMs, totalMs: performance.now() - started, tokens };
}

interface Summary {
  /** Median over repetitions of tokens / (send → done). */
  tokensPerSecond: number;
  ttftP50Ms: number;
  totalP50Ms: number;
  /** Median CPU time of the server process per token, µs. */
  serverCpuUsPerToken: number;
  repetitions: number;
}

interface Sample extends StreamTiming {
  /** CPU time the server process used from the send to `done`, ms. */
  serverCpuMs: number;
}

function summarize(samples: readonly Sample[]): Summary {
  return {
    tokensPerSecond: median(samples.map((t) => (t.tokens * 1000) / t.totalMs)),
    ttftP50Ms: median(samples.map((t) => t.ttftMs)),
    totalP50Ms: median(samples.map((t) => t.totalMs)),
    serverCpuUsPerToken: median(samples.map((t) => (t.serverCpuMs * 1000) / t.tokens)),
    repetitions: samples.length,
  };
}

function figuresOf(s: Summary): string {
  return `${formatRate(s.tokensPerSecond, 'tokens/s')} · first token ${formatMs(s.ttftP50Ms)} · done ${formatMs(s.totalP50Ms)} · server CPU ${s.serverCpuUsPerToken.toFixed(1)} µs/token (median, n=${s.repetitions})`;
}

/** Timed repetitions per contender (after the warm-up). */
function repetitionsOf(ctx: BenchContext): number {
  return ctx.size(2, 5);
}

type OursName = 'trpc' | 'rest' | 'floor';
/**
 * The peers of this case (full sizes only, to keep the smoke run short): LangGraph's dev server
 * and Mastra on LibSQL, the nearest to our SQLite (a token stream barely touches storage).
 */
const PEERS: readonly PeerName[] = ['langgraph', 'mastra-libsql'];
type ContenderName = OursName | PeerName;

interface Contender {
  /** The server process whose CPU time is sampled around the stream. */
  pid: number;
  /** Untimed set-up (a fresh session); returns the timed stream. */
  prepare(): Promise<() => Promise<StreamTiming>>;
}

/** A peer's turn on a fresh thread (the set-up), read with the peer's client (the stream). */
function peerContender(peer: PeerServer, tokens: number): Contender {
  return {
    pid: peer.pid,
    async prepare() {
      const thread = await peer.newThread();
      return async () => {
        const { shape, ttftMs, totalMs } = await peer.turn(thread, PROMPT);
        if (shape.terminal !== 'done') throw new Error(`${peer.label}: ${shape.terminal}`);
        return checkTokens(peer.label, { ttftMs, totalMs, tokens: shape.tokens }, tokens);
      };
    },
  };
}

async function measure(
  ctx: BenchContext,
  tokens: number,
): Promise<{
  summaries: Map<ContenderName, Summary>;
  peers: Map<PeerName, PeerServer>;
  /** Median CPU µs per chunk of LangChain's ChatOpenAI alone, and its repetitions. */
  modelClient: { cpuUsPerChunk: number; repetitions: number };
}> {
  const words = Array.from({ length: tokens }, (_, i) => WORDS[i % WORDS.length] as string);
  // Every chat completion the server asks for gets the whole answer at once, one chunk per token.
  const fake = await FakeOpenAIServer.start({ fallback: { text: words } });
  const floor = await startSseFloor(ctx.repoRoot, {
    tokens,
    words: WORDS,
    profileDir: ctx.profileDir,
  }).catch(async (error: unknown) => {
    await fake.close();
    throw error;
  });
  let peers = new Map<PeerName, PeerServer>();
  try {
    peers = await startPeers(ctx, fake.baseUrl, ctx.smoke ? [] : PEERS);
    const agent = await startAgentServer(ctx, {
      provider: 'sqlite',
      fake,
      // The whole run fits in the replay buffer: `streamMessage` subscribes only after the send,
      // and under machine load a zero-latency model can be more than the default 1,000 events
      // ahead by then; a lost token would fail the repetition instead of measuring streaming.
      env: { COGNITION_SSE_BUFFER_SIZE: String(tokens + OTHER_EVENTS) },
    });
    try {
      const serverPid = agent.server.child.pid;
      if (serverPid === undefined) throw new Error('the server process has no pid');
      const newSession = async (): Promise<string> =>
        (await agent.client.sessions.create.mutate({ title: 'token stream benchmark' })).id;
      const contenders = new Map<ContenderName, Contender>(
        Object.entries({
          trpc: {
            pid: serverPid,
            async prepare() {
              const sessionId = await newSession();
              return async () =>
                checkTokens('tRPC', await streamTrpc(agent.client, sessionId), tokens);
            },
          },
          rest: {
            pid: serverPid,
            async prepare() {
              const url = `${agent.url}/sessions/${await newSession()}/messages`;
              return async () =>
                checkTokens('REST', await readTokenStream(url, { content: PROMPT }), tokens);
            },
          },
          floor: {
            pid: floor.pid,
            prepare: () =>
              Promise.resolve(async () =>
                checkTokens('floor', await readTokenStream(floor.url, { content: PROMPT }), tokens),
              ),
          },
        } satisfies Record<OursName, Contender>) as [OursName, Contender][],
      );
      for (const [name, peer] of peers) contenders.set(name, peerContender(peer, tokens));
      const names = [...contenders.keys()];
      const warmup = ctx.size(1, 2);
      const repetitions = repetitionsOf(ctx);
      const samples = new Map<ContenderName, Sample[]>(names.map((name) => [name, []]));
      for (let r = 0; r < warmup + repetitions; r += 1) {
        // The order rotates, so a load spike on this shared machine hits every contender alike.
        for (let k = 0; k < names.length; k += 1) {
          const name = names[(r + k) % names.length] as ContenderName;
          const contender = contenders.get(name);
          if (!contender) throw new Error(`no contender ${name}`);
          const stream = await contender.prepare();
          const cpuBefore = processCpuMs(contender.pid);
          const timing = await stream();
          const serverCpuMs = processCpuMs(contender.pid) - cpuBefore;
          if (r >= warmup) samples.get(name)?.push({ ...timing, serverCpuMs });
        }
        ctx.log(
          r < warmup ? `warm-up ${r + 1}/${warmup}` : `repetition ${r + 1 - warmup}/${repetitions}`,
        );
      }
      ctx.log('LangChain ChatOpenAI alone');
      const clientFigures = await modelClientCpuUsPerChunk(ctx.repoRoot, {
        modelUrl: fake.baseUrl,
        model: BENCH_MODEL,
        tokens,
        repetitions,
      });
      return {
        summaries: new Map(names.map((name) => [name, summarize(samples.get(name) ?? [])])),
        peers,
        modelClient: { cpuUsPerChunk: median(clientFigures), repetitions: clientFigures.length },
      };
    } finally {
      await agent.cleanup();
    }
  } finally {
    await stopPeers(peers);
    await floor.stop();
    await fake.close();
  }
}

export const tokenStreamBenchmark: Benchmark = {
  id: 2,
  title: 'Streaming a 20,000-token answer to one subscriber',
  measuredAs:
    'tokens/s (tokens / send → `done`) and time to first token on the built server (SQLite), tRPC subscription (`streamMessage`) and REST SSE (`POST /sessions/{id}/messages`)',
  comparedWith:
    'a bare `node:http` server writing the same SSE events (the floor); peers: the LangGraph.js API server (in-memory), Mastra (LibSQL); for server CPU, LangChain ChatOpenAI alone reading the same stream',
  goal: 'tokens/s ≥ 0.7× the floor and ≥ 1.0× each peer; server CPU per token ≤ 1.5× that of LangChain ChatOpenAI alone per chunk',
  async run(ctx) {
    const tokens = ctx.size(2_000, 20_000);
    const { summaries, peers, modelClient } = await measure(ctx, tokens);
    const summaryOf = (name: ContenderName): Summary => {
      const summary = summaries.get(name);
      if (!summary) throw new Error(`${name} was not measured`);
      return summary;
    };
    const s = { trpc: summaryOf('trpc'), rest: summaryOf('rest'), floor: summaryOf('floor') };
    const floorFigures = figuresOf(s.floor);
    const row = (label: string, ours: Summary): ResultRow => ({
      case: label,
      figures: figuresOf(ours),
      metrics: {
        tokensPerSecond: ours.tokensPerSecond,
        ttftP50Ms: ours.ttftP50Ms,
        doneP50Ms: ours.totalP50Ms,
        floorTokensPerSecond: s.floor.tokensPerSecond,
        floorTtftP50Ms: s.floor.ttftP50Ms,
        floorDoneP50Ms: s.floor.totalP50Ms,
        serverCpuUsPerToken: ours.serverCpuUsPerToken,
        floorCpuUsPerToken: s.floor.serverCpuUsPerToken,
        ...Object.fromEntries(
          [...peers.keys()].flatMap((name) => [
            [`${name}TokensPerSecond`, summaryOf(name).tokensPerSecond],
            [`${name}CpuUsPerToken`, summaryOf(name).serverCpuUsPerToken],
          ]),
        ),
        tokens,
        repetitions: ours.repetitions,
      },
      comparison: compare(
        ours.tokensPerSecond,
        s.floor.tokensPerSecond,
        'bare node:http SSE',
        floorFigures,
        { kind: 'at-least', ratio: 0.7 },
      ),
      ...(peers.size > 0
        ? {
            peers: [...peers].map(([name, peer]) => {
              const theirs = summaryOf(name);
              return compare(
                ours.tokensPerSecond,
                theirs.tokensPerSecond,
                peer.label,
                figuresOf(theirs),
                { kind: 'at-least', ratio: 1 },
              );
            }),
          }
        : {}),
    });
    const cpuRow = (label: string, ours: Summary): ResultRow => ({
      case: `${label}, server CPU per token`,
      figures: `${ours.serverCpuUsPerToken.toFixed(1)} µs/token (median, n=${ours.repetitions})`,
      metrics: {
        serverCpuUsPerToken: ours.serverCpuUsPerToken,
        modelClientCpuUsPerChunk: modelClient.cpuUsPerChunk,
      },
      comparison: compare(
        ours.serverCpuUsPerToken,
        modelClient.cpuUsPerChunk,
        'LangChain ChatOpenAI alone',
        `${modelClient.cpuUsPerChunk.toFixed(1)} µs/chunk (median, n=${modelClient.repetitions})`,
        { kind: 'at-most', ratio: 1.5 },
      ),
    });
    return {
      rows: [
        row(`tRPC subscription, ${tokens.toLocaleString('en-US')} tokens`, s.trpc),
        row(`REST SSE, ${tokens.toLocaleString('en-US')} tokens`, s.rest),
        cpuRow('tRPC subscription', s.trpc),
        cpuRow('REST SSE', s.rest),
      ],
      notes: [
        `The model is the fake OpenAI-compatible server in the bench process with no delay: every chat completion streams the whole answer at once, one chunk per token (${tokens.toLocaleString('en-US')} tokens of 2–6 characters). The server (SQLite, default settings except \`COGNITION_SSE_BUFFER_SIZE\` = tokens + ${OTHER_EVENTS}, so a subscriber that attaches late under machine load still gets the run from its first event; with the default 1,000 every token also arrived in trials) runs as a separate process; one fresh session per repetition.`,
        'tRPC: `streamMessage` of @cognition/client (the `messages.send` mutation, then the `runs.events` subscription over SSE, parsed by the `eventsource` package and superjson in the bench process). REST: `fetch` of `POST /sessions/{id}/messages`, SSE blocks parsed as they arrive. Both time send → first `token` event and send → `done`; a repetition that loses a token fails the benchmark.',
        'Floor: a bare `node:http` server in its own process (like our server, so neither shares the client\'s event loop) writing the same events — `id:`/`event: token`/`data: {"content":…}` blocks with ids of the same width, one `res.write` per event, waiting for `drain` like ours, then a `done` carrying the whole text — read by the REST client code. Both rows are compared with it; the tRPC row also pays the typed client\'s parsing.',
        "Contenders rotate within each repetition (after a warm-up), so machine load hits all three alike; figures are medians over repetitions. Server CPU per token is the user + system time of the server process (/proc/<pid>/stat) from the send to `done`, over the tokens: unlike tokens/s it does not depend on what else the machine runs. For ours it includes reading the model's stream (openai client + LangChain), which the floor does not have.",
        `Server CPU per token is also compared with what LangChain's ChatOpenAI alone (streaming, the model client our server uses through the \`openai_compatible\` provider) spends per chunk reading the same ${tokens.toLocaleString('en-US')}-chunk answer from the same fake model: \`model-client-cpu.mjs\` in its own process, its user + system time from /proc around each stream (after a warm-up stream), median of ${repetitionsOf(ctx)} streams, measured after the rotation. Goal: ours ≤ 1.5× that.`,
        ctx.smoke
          ? 'Peers are measured at full sizes only (the smoke run measures them in benchmark 1).'
          : "Peers, in the same rotation on fresh threads, answer the same prompt from the same fake model (one chunk per token): the LangGraph.js API server (in-memory) read with `@langchain/langgraph-sdk` `runs.stream` in stream mode `messages-tuple` (one SSE event per token, each carrying the message chunk and its run metadata), and Mastra on LibSQL read with `@mastra/client-js` `agent.stream` (`text-delta` chunks); a token is an answer chunk with text. Their server CPU per token is measured the same way as ours. Both also pay their model client (LangChain's ChatOpenAI; the AI SDK provider).",
      ],
    };
  },
};
