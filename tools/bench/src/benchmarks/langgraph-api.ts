import { writeFile } from 'node:fs/promises';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { FakeOpenAIServer, parseSseBlocks } from '@cognition/runtime/testing/http';
import type { RecordedRequest } from '@cognition/runtime/testing/http';
import { sampleLatencies } from '../harness/measure';
import { compare, formatLatency, formatRate, median, summarizeLatencies } from '../harness/stats';
import type { Goal } from '../harness/types';
import type { Benchmark, BenchContext, BenchmarkOutput, ResultRow } from '../harness/types';
import { ensurePeersInstalled, peersDir } from '../peers/install';
import type { LangGraphClient, MessageTuple } from '../peers/langgraph';
import { langGraphClient, startLangGraphPeer } from '../peers/langgraph';
import type { AgentServer } from '../support/agent-server';
import {
  answerText,
  BENCH_MODEL,
  startAgentServer,
  toolThenAnswer,
  TURN_ANSWER_TOKENS,
  TURN_PROMPT,
} from '../support/agent-server';
import { processCpuMs } from '../support/process-cpu';

/** The prompt of the long answer; any other prompt gets benchmark 1's turn. */
const STREAM_PROMPT = 'Write a very long answer.';
/** Token i of the long answer (benchmark 2's words: each starts with its only space). */
const WORDS = [' the', ' quick', ' brown', ' fox', ' jumps', ' over', ' a', ' lazy', ' dog.'];
/** The graph id of the peer's langgraph-graph.mjs, in both servers' graph lists. */
const GRAPH = 'agent';
/** Our built-in agent as an assistant of the LangGraph API (graph `agent:<name>`). */
const OUR_AGENT = 'agent:default';

/** What a client saw of one turn or stream: the answer's text and how the run ended. */
interface Answer {
  text: string;
  toolCalls: number;
  toolResultsOk: number;
  /** `done`, or what the error event said. */
  end: string;
  ttftMs: number;
  totalMs: number;
}

/** Throws unless `answer` is exactly the scripted one: same words, tool calls, a clean end. */
function checkAnswer(who: string, answer: Answer, words: string, toolCalls: number): Answer {
  const got = answer.text.split(/\s+/).filter((w) => w !== '');
  const want = words.split(/\s+/).filter((w) => w !== '');
  const sameWords = got.length === want.length && got.every((w, i) => w === want[i]);
  if (answer.end !== 'done' || !sameWords || answer.toolCalls !== toolCalls) {
    throw new Error(
      `${who}: expected ${want.length} words, ${toolCalls} tool call(s) and the end, got ${got.length} words ` +
        `(${sameWords ? 'the same' : 'different'}), ${answer.toolCalls} tool call(s), ${answer.toolResultsOk} ok result(s), end: ${answer.end}`,
    );
  }
  if (answer.toolResultsOk !== toolCalls) {
    throw new Error(
      `${who}: ${answer.toolResultsOk} successful tool result(s) for ${toolCalls} call(s)`,
    );
  }
  return answer;
}

/**
 * One run through the official SDK: `runs.stream` in `messages-tuple` mode, read to its end. A
 * graph's tool result is a `tool` message there; our agents' tool calls and results are `custom`
 * parts (docs/langgraph-api.md), asked for with `custom`.
 */
async function sdkAnswer(
  client: LangGraphClient,
  thread: string,
  assistant: string,
  prompt: string,
  custom = false,
): Promise<Answer> {
  const started = performance.now();
  const answer: Answer = {
    text: '',
    toolCalls: 0,
    toolResultsOk: 0,
    end: 'done',
    ttftMs: 0,
    totalMs: 0,
  };
  const stream = client.runs.stream(thread, assistant, {
    input: { messages: [{ role: 'user', content: prompt }] },
    streamMode: custom ? ['messages-tuple', 'custom'] : 'messages-tuple',
  });
  for await (const part of stream) {
    if (part.event === 'error') answer.end = `error: ${JSON.stringify(part.data)}`;
    if (part.event === 'custom') {
      const data = part.data as { type?: string; exit_code?: number };
      if (data.type === 'tool_call') answer.toolCalls += 1;
      if (data.type === 'tool_result' && data.exit_code === 0) answer.toolResultsOk += 1;
    }
    if (part.event !== 'messages') continue;
    const [message] = part.data as MessageTuple;
    if (message.type === 'tool') {
      if (message.status !== 'error') answer.toolResultsOk += 1;
    } else if (message.type === 'AIMessageChunk' || message.type === 'ai') {
      answer.toolCalls += (message.tool_call_chunks ?? []).filter((c) => c.name).length;
      if (typeof message.content === 'string' && message.content !== '') {
        if (answer.text === '') answer.ttftMs = performance.now() - started;
        answer.text += message.content;
      }
    }
  }
  answer.totalMs = performance.now() - started;
  return answer;
}

/** One turn through our own REST route (`POST /sessions/{id}/messages`, SSE) to `done`. */
async function restAnswer(baseUrl: string, sessionId: string, prompt: string): Promise<Answer> {
  const started = performance.now();
  const answer: Answer = {
    text: '',
    toolCalls: 0,
    toolResultsOk: 0,
    end: 'none',
    ttftMs: 0,
    totalMs: 0,
  };
  const response = await fetch(`${baseUrl}/sessions/${sessionId}/messages`, {
    method: 'POST',
    headers: { 'Content-Type': 'application/json' },
    body: JSON.stringify({ content: prompt }),
  });
  if (response.status !== 200 || !response.body) {
    throw new Error(`REST answered ${response.status}: ${await response.text()}`);
  }
  const reader = (response.body as ReadableStream<Uint8Array>).getReader();
  const decoder = new TextDecoder();
  let buffer = '';
  for (;;) {
    const { value, done } = await reader.read();
    if (done) break;
    buffer += decoder.decode(value, { stream: true });
    const parsed = parseSseBlocks(buffer);
    buffer = parsed.rest;
    for (const frame of parsed.frames) {
      const data = JSON.parse(frame.data ?? '{}') as { content?: string; exit_code?: number };
      if (frame.event === 'token') {
        if (answer.text === '') answer.ttftMs = performance.now() - started;
        answer.text += data.content ?? '';
      } else if (frame.event === 'tool_call') answer.toolCalls += 1;
      else if (frame.event === 'tool_result' && data.exit_code === 0) answer.toolResultsOk += 1;
      else if (frame.event === 'done') answer.end = 'done';
      else if (frame.event === 'error') answer.end = `error: ${frame.data ?? ''}`;
    }
  }
  answer.totalMs = performance.now() - started;
  return answer;
}

/** The last user message's text of a chat completion request. */
function lastUserText(request: RecordedRequest): string {
  const user = (request.body.messages ?? []).filter((m) => m.role === 'user').at(-1);
  return typeof user?.content === 'string' ? user.content : JSON.stringify(user?.content ?? '');
}

type Contender = 'graph' | 'agent' | 'rest' | 'peer';

interface Setup {
  ours: AgentServer;
  ourSdk: LangGraphClient;
  peerSdk: LangGraphClient;
  peerPid: number;
  peerLabel: string;
}

/** A fresh conversation of `who` (untimed); returns the call that runs `prompt` on it. */
async function prepare(s: Setup, who: Contender, prompt: string): Promise<() => Promise<Answer>> {
  switch (who) {
    case 'graph': {
      const thread = (await s.ourSdk.threads.create()).thread_id;
      return () => sdkAnswer(s.ourSdk, thread, GRAPH, prompt);
    }
    case 'agent': {
      const thread = (await s.ourSdk.threads.create()).thread_id;
      return () => sdkAnswer(s.ourSdk, thread, OUR_AGENT, prompt, true);
    }
    case 'rest': {
      const session = await s.ours.client.sessions.create.mutate({ title: 'langgraph api bench' });
      return () => restAnswer(s.ours.url, session.id, prompt);
    }
    case 'peer': {
      const thread = (await s.peerSdk.threads.create()).thread_id;
      return () => sdkAnswer(s.peerSdk, thread, GRAPH, prompt);
    }
  }
}

const LABELS: Record<Contender, string> = {
  graph: 'LangGraph API, langgraph.json graph',
  agent: 'LangGraph API, built-in agent',
  rest: 'REST `POST /sessions/{id}/messages`, built-in agent',
  peer: 'LangGraph API server (in-memory)',
};

async function measureTurns(ctx: BenchContext, s: Setup): Promise<ResultRow[]> {
  const warmup = ctx.size(1, 10);
  const samples = ctx.size(3, 60);
  const peerSamples = ctx.size(2, 30);
  const names: Contender[] = ['graph', 'agent', 'rest', 'peer'];
  const calls = new Map<Contender, (() => Promise<Answer>)[]>();
  for (const who of names) {
    const n = warmup + (who === 'peer' ? peerSamples : samples);
    const list: (() => Promise<Answer>)[] = [];
    for (let i = 0; i < n; i += 1) list.push(await prepare(s, who, TURN_PROMPT));
    calls.set(who, list);
  }
  const words = answerText(TURN_ANSWER_TOKENS);
  const operation = (who: Contender) => async (i: number) => {
    const call = calls.get(who)?.[i];
    if (!call) throw new Error(`no conversation prepared for ${who} turn ${i}`);
    checkAnswer(LABELS[who], await call(), words, 1);
  };
  ctx.log(`turns: ${samples} each, ${peerSamples} for the peer, after ${warmup} warm-up`);
  const latencies = await sampleLatencies(
    Object.fromEntries(names.map((who) => [who, operation(who)])) as Record<
      Contender,
      (i: number) => Promise<void>
    >,
    { warmup, samples, fewer: { peer: peerSamples } },
  );
  const summary = (who: Contender) => summarizeLatencies(latencies[who] ?? []);
  const row = (who: Contender, against: Contender, goal: Goal): ResultRow => {
    const ours = summary(who);
    const ref = summary(against);
    return {
      case: `${LABELS[who]}: a turn (SQLite), send → end`,
      figures: formatLatency(ours),
      metrics: {
        p50Ms: ours.p50,
        p99Ms: ours.p99,
        refP50Ms: ref.p50,
        refP99Ms: ref.p99,
        samples: ours.samples,
      },
      comparison: compare(ours.p50, ref.p50, LABELS[against], formatLatency(ref), goal),
    };
  };
  return [
    row('graph', 'peer', { kind: 'at-most', ratio: 0.5 }),
    row('agent', 'rest', { kind: 'at-most', ratio: 1.2 }),
  ];
}

interface StreamSample {
  tokensPerSecond: number;
  ttftMs: number;
  cpuUsPerToken: number;
}

async function measureStreams(ctx: BenchContext, s: Setup, tokens: number): Promise<ResultRow[]> {
  const warmup = ctx.size(1, 1);
  const repetitions = ctx.size(2, 5);
  const names: Contender[] = ['graph', 'agent', 'rest', 'peer'];
  const words = Array.from({ length: tokens }, (_, i) => WORDS[i % WORDS.length]).join('');
  const samples = new Map<Contender, StreamSample[]>(names.map((who) => [who, []]));
  const serverPid = s.ours.server.child.pid;
  if (serverPid === undefined) throw new Error('the server process has no pid');
  for (let r = 0; r < warmup + repetitions; r += 1) {
    // Rotating order: a load spike on this shared machine hits every contender alike.
    for (let k = 0; k < names.length; k += 1) {
      const who = names[(r + k) % names.length] as Contender;
      const call = await prepare(s, who, STREAM_PROMPT);
      const pid = who === 'peer' ? s.peerPid : serverPid;
      const cpuBefore = processCpuMs(pid);
      const answer = checkAnswer(LABELS[who], await call(), words, 0);
      const cpuMs = processCpuMs(pid) - cpuBefore;
      if (r >= warmup) {
        samples.get(who)?.push({
          tokensPerSecond: (tokens * 1000) / answer.totalMs,
          ttftMs: answer.ttftMs,
          cpuUsPerToken: (cpuMs * 1000) / tokens,
        });
      }
    }
    ctx.log(r < warmup ? `stream warm-up ${r + 1}` : `stream ${r + 1 - warmup}/${repetitions}`);
  }
  const summary = (who: Contender) => {
    const list = samples.get(who) ?? [];
    return {
      tokensPerSecond: median(list.map((x) => x.tokensPerSecond)),
      ttftMs: median(list.map((x) => x.ttftMs)),
      cpuUsPerToken: median(list.map((x) => x.cpuUsPerToken)),
      n: list.length,
    };
  };
  const figures = (who: Contender): string => {
    const x = summary(who);
    return `${formatRate(x.tokensPerSecond, 'tokens/s')} · first token ${x.ttftMs.toFixed(0)} ms · server CPU ${x.cpuUsPerToken.toFixed(1)} µs/token (median, n=${x.n})`;
  };
  const row = (who: Contender, against: Contender, goal?: Goal): ResultRow => {
    const ours = summary(who);
    const ref = summary(against);
    return {
      case: `${LABELS[who]}: ${tokens.toLocaleString('en-US')}-token stream (SQLite)`,
      figures: figures(who),
      metrics: {
        tokensPerSecond: ours.tokensPerSecond,
        ttftP50Ms: ours.ttftMs,
        serverCpuUsPerToken: ours.cpuUsPerToken,
        refTokensPerSecond: ref.tokensPerSecond,
        refCpuUsPerToken: ref.cpuUsPerToken,
        tokens,
        repetitions: ours.n,
      },
      comparison: compare(
        ours.tokensPerSecond,
        ref.tokensPerSecond,
        LABELS[against],
        figures(against),
        goal,
      ),
    };
  };
  return [row('graph', 'peer', { kind: 'at-least', ratio: 1.5 }), row('agent', 'rest')];
}

async function run(ctx: BenchContext): Promise<BenchmarkOutput> {
  const tokens = ctx.size(500, 20_000);
  const streamWords = Array.from({ length: tokens }, (_, i) => WORDS[i % WORDS.length] as string);
  const turn = toolThenAnswer(TURN_ANSWER_TOKENS);
  // One fake model for every contender: the long answer for STREAM_PROMPT, else the turn.
  const fake = await FakeOpenAIServer.start({
    fallback: (request) =>
      lastUserText(request) === STREAM_PROMPT ? { text: streamWords } : turn(request),
  });
  let stopPeer: () => Promise<void> = () => Promise.resolve();
  let ours: AgentServer | undefined;
  try {
    await ensurePeersInstalled(ctx.repoRoot, (line) => ctx.log(line));
    // The peer's graph file, as `langgraph dev` loads it, is the graph of our langgraph.json.
    const config = path.join(ctx.tmpDir, 'langgraph.json');
    const graphFile = path.join(peersDir(ctx.repoRoot), 'langgraph-graph.mjs');
    await writeFile(config, JSON.stringify({ graphs: { [GRAPH]: `${graphFile}:graph` } }));
    ctx.log('starting the LangGraph API server (peer)');
    const peer = await startLangGraphPeer(ctx, { modelUrl: fake.baseUrl });
    stopPeer = () => peer.stop();
    ours = await startAgentServer(ctx, {
      provider: 'sqlite',
      fake,
      env: {
        COGNITION_LANGGRAPH_CONFIG: config,
        // What the peer's graph module reads at load (peer-process.ts sets the same for the peer).
        BENCH_PEER_WORKSPACE: ctx.tmpDir,
        BENCH_PEER_MODEL_URL: fake.baseUrl,
        BENCH_PEER_MODEL: BENCH_MODEL,
        COGNITION_SSE_BUFFER_SIZE: String(tokens + 16),
      },
    });
    const setup: Setup = {
      ours,
      ourSdk: langGraphClient(ctx.repoRoot, ours.url),
      peerSdk: langGraphClient(ctx.repoRoot, peer.url),
      peerPid: peer.pid,
      peerLabel: peer.label,
    };
    const rows = [
      ...(await measureTurns(ctx, setup)),
      ...(await measureStreams(ctx, setup, tokens)),
    ];
    return { rows, notes: notes(ctx, tokens) };
  } finally {
    await ours?.cleanup();
    await stopPeer();
    await fake.close();
  }
}

function notes(ctx: BenchContext, tokens: number): string[] {
  return [
    `Both servers load the same graph file (tools/bench/peers/langgraph-graph.mjs: a StateGraph of LangChain's ChatOpenAI, streaming, on the fake OpenAI-compatible model in the bench process, and a ToolNode with \`ls\`), ours from a langgraph.json naming it (\`COGNITION_LANGGRAPH_CONFIG\`), on SQLite; the peer is the LangGraph.js API server (\`@langchain/langgraph-api\`, what \`langgraph dev\` serves, in-memory). Both are driven by the same client, \`@langchain/langgraph-sdk\` \`runs.stream\` in stream mode \`messages-tuple\`, on a fresh thread per call (created beforehand, untimed), timed from the send to the end of the stream.`,
    `A turn: the model asks for \`ls\`, the tool runs, the model streams a ${TURN_ANSWER_TOKENS}-word answer. The stream: one ${tokens.toLocaleString('en-US')}-token answer (one chunk per token). Every call of every contender is checked: the answer's words are exactly the scripted ones, the tool call (turn) succeeded, and the stream ended without an error event (REST: \`done\`).`,
    `The surface's overhead: our built-in agent (\`agent:default\`) over the LangGraph API (SDK) against the same agent's turn over our REST route (\`POST /sessions/{id}/messages\`, SSE read with fetch), same server, same storage, same fake model.`,
    `Turns take turns call by call in a rotating order (${ctx.size(3, 60)} each after ${ctx.size(1, 10)} warm-up; the peer ${ctx.size(2, 30)}, spread evenly: its run queue polls for new runs, which dominates its turn latency). Streams rotate the same way, ${ctx.size(2, 5)} repetitions after a warm-up; tokens/s = tokens / (send → end), server CPU per token from /proc around each stream. Figures are medians (p50).`,
  ];
}

export const langGraphApiBenchmark: Benchmark = {
  id: 19,
  name: 'langgraph',
  title: 'The LangGraph API: a turn and a long stream against the LangGraph.js API server',
  measuredAs:
    'turn latency p50 (send → end) and tokens/s of a long answer through our LangGraph API (`/threads/{id}/runs/stream`, the official SDK) on a langgraph.json graph, SQLite; and of our built-in agent over the same API against our REST route',
  comparedWith:
    'the LangGraph.js API server (`@langchain/langgraph-api`, in-memory) with the same graph file, fake model and SDK; our REST route for the same turn',
  goal: 'turn p50 ≤ 0.5× the peer’s; tokens/s ≥ 1.5× the peer’s; LangGraph API turn ≤ 1.2× the REST route’s',
  run,
};
