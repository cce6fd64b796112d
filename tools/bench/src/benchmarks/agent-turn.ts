import { randomUUID } from 'node:crypto';
import { mkdir } from 'node:fs/promises';
import path from 'node:path';
import type { CognitionClient } from '@cognition/client';
import { FakeOpenAIServer } from '@cognition/runtime/testing/http';
import { sampleLatencies } from '../harness/measure';
import { compare, formatLatency, formatMs, summarizeLatencies } from '../harness/stats';
import type { Operation } from '../harness/measure';
import type { Benchmark, BenchContext, BenchmarkOutput, ResultRow } from '../harness/types';
import type { PeerServer } from '../peers/peer';
import type { PeerName } from '../peers/start';
import { ALL_PEERS, startPeers, stopPeers } from '../peers/start';
import { processCpuMs } from '../support/process-cpu';
import type { AgentServer, AgentServerProvider, TurnShape } from '../support/agent-server';
import { createInProcessAgent } from '../support/in-process-agent';
import {
  startAgentServer,
  streamTurn,
  toolThenAnswer,
  TURN_ANSWER_TOKENS,
  TURN_PROMPT,
  turnProblem,
} from '../support/agent-server';

/** @throws Error when a turn was not one successful tool call and a 50-token answer. */
function checkTurn(who: string, shape: TurnShape): void {
  const problem = turnProblem(shape, TURN_ANSWER_TOKENS);
  if (problem !== null) throw new Error(`${who}: ${problem}`);
}

async function createSessions(client: CognitionClient, count: number): Promise<string[]> {
  const ids: string[] = [];
  for (let i = 0; i < count; i += 1) {
    ids.push((await client.sessions.create.mutate({ title: `turn ${i}` })).id);
  }
  return ids;
}

interface ServerContender {
  provider: AgentServerProvider;
  label: string;
  /** Whether the goal applies (the memory backend is a decomposition, not a product). */
  goal: boolean;
  /** The peer on the nearest storage, compared with this row (goal: ≤ 1.0× its p50). */
  peer: PeerName;
}

const SERVER_CONTENDERS: readonly ServerContender[] = [
  { provider: 'sqlite', label: 'SQLite', goal: true, peer: 'mastra-libsql' },
  { provider: 'postgresql', label: 'PostgreSQL', goal: true, peer: 'mastra-postgresql' },
  { provider: 'memory', label: 'in-memory storage (no database)', goal: false, peer: 'langgraph' },
];

async function createThreads(peer: PeerServer, count: number): Promise<string[]> {
  const ids: string[] = [];
  for (let i = 0; i < count; i += 1) ids.push(await peer.newThread());
  return ids;
}

/** Server CPU per turn of process `pid` since `before`, ms. */
function cpuPerTurn(pid: number, before: number, turns: number): number {
  return (processCpuMs(pid) - before) / turns;
}

async function run(ctx: BenchContext): Promise<BenchmarkOutput> {
  const warmup = ctx.size(2, 20);
  const samples = ctx.size(10, 100);
  // The peers are slower (LangGraph's dev server polls its run queue): fewer samples, spread over
  // the same rounds.
  const peerSamples = ctx.size(2, 50);
  const fake = await FakeOpenAIServer.start({ fallback: toolThenAnswer(TURN_ANSWER_TOKENS) });
  const started: { contender: ServerContender; agent: AgentServer; sessions: string[] }[] = [];
  let peers = new Map<PeerName, PeerServer>();
  try {
    for (const contender of SERVER_CONTENDERS) {
      const agent = await startAgentServer(ctx, { provider: contender.provider, fake });
      started.push({ contender, agent, sessions: [] });
    }
    peers = await startPeers(ctx, fake.baseUrl, ALL_PEERS);
    for (const entry of started) {
      entry.sessions = await createSessions(entry.agent.client, warmup + samples);
    }
    const peerThreads = new Map<PeerName, string[]>();
    for (const [name, peer] of peers) {
      peerThreads.set(name, await createThreads(peer, warmup + peerSamples));
    }
    const floorWorkspace = path.join(ctx.tmpDir, 'floor');
    await mkdir(floorWorkspace, { recursive: true });
    // The floor: the same graph in-process on MemorySaver (support/in-process-agent.ts), a
    // fresh thread per turn like our sessions.
    const floor = await createInProcessAgent(fake, floorWorkspace);

    const contenders: Record<string, Operation> = {
      floor: async () => checkTurn('floor', await floor(randomUUID(), TURN_PROMPT)),
    };
    for (const { contender, agent, sessions } of started) {
      contenders[contender.provider] = async (i) => {
        const sessionId = sessions[i];
        if (sessionId === undefined) throw new Error(`no session prepared for turn ${i}`);
        checkTurn(contender.label, await streamTurn(agent.client, sessionId, TURN_PROMPT));
      };
    }
    for (const [name, peer] of peers) {
      const threads = peerThreads.get(name) ?? [];
      contenders[name] = async (i) => {
        const thread = threads[i];
        if (thread === undefined) throw new Error(`no thread prepared for turn ${i}`);
        checkTurn(peer.label, (await peer.turn(thread, TURN_PROMPT)).shape);
      };
    }
    const pidOf = (agent: AgentServer): number => {
      const pid = agent.server.child.pid;
      if (pid === undefined) throw new Error('a server process has no pid');
      return pid;
    };
    const cpuBefore = started.map(({ agent }) => processCpuMs(pidOf(agent)));
    const peerCpuBefore = new Map([...peers].map(([name, peer]) => [name, processCpuMs(peer.pid)]));
    ctx.log(
      `measuring ${samples} turns each, ${peerSamples} per peer (after ${warmup} warm-up turns)`,
    );
    const latencies = await sampleLatencies(contenders, {
      warmup,
      samples,
      fewer: Object.fromEntries([...peers.keys()].map((name) => [name, peerSamples])),
    });
    const floorSummary = summarizeLatencies(latencies['floor'] ?? []);
    const peerFigures = new Map(
      [...peers].map(([name, peer]) => {
        const summary = summarizeLatencies(latencies[name] ?? []);
        const cpu = cpuPerTurn(peer.pid, peerCpuBefore.get(name) ?? 0, warmup + peerSamples);
        return [name, { peer, summary, cpu }] as const;
      }),
    );
    const rows = started.map(({ contender, agent }, index): ResultRow => {
      const ours = summarizeLatencies(latencies[contender.provider] ?? []);
      const serverCpu = cpuPerTurn(pidOf(agent), cpuBefore[index] ?? 0, warmup + samples);
      const peer = peerFigures.get(contender.peer);
      if (!peer) throw new Error(`peer ${contender.peer} was not measured`);
      return {
        case: `${contender.label}, send → done (typed client)`,
        figures: `${formatLatency(ours)} · server CPU ${formatMs(serverCpu)}/turn`,
        metrics: {
          p50Ms: ours.p50,
          p99Ms: ours.p99,
          floorP50Ms: floorSummary.p50,
          floorP99Ms: floorSummary.p99,
          serverCpuMsPerTurn: serverCpu,
          samples: ours.samples,
          peerP50Ms: peer.summary.p50,
          peerP99Ms: peer.summary.p99,
          peerServerCpuMsPerTurn: peer.cpu,
        },
        comparison: compare(
          ours.p50,
          floorSummary.p50,
          'graph in-process, MemorySaver',
          formatLatency(floorSummary),
          contender.goal ? { kind: 'at-most', ratio: 1.5 } : undefined,
        ),
        peers: [
          compare(
            ours.p50,
            peer.summary.p50,
            peer.peer.label,
            `${formatLatency(peer.summary)} · server CPU ${formatMs(peer.cpu)}/turn`,
            { kind: 'at-most', ratio: 1 },
          ),
        ],
      };
    });
    return {
      rows,
      notes: [
        `A turn: the user message → the model asks for \`ls\` of the workspace → the tool runs in the local sandbox → the model streams a ${TURN_ANSWER_TOKENS}-word answer (one token event per word) → \`done\`. The model is the fake OpenAI-compatible server in the bench process (zero chunk delay), reached over loopback HTTP by both the server and the floor.`,
        'Each turn runs on a fresh session (created beforehand, untimed), i.e. the first turn of a conversation: every sample does the same work instead of carrying a growing history.',
        "Ours: `streamMessage` of `@cognition/client` against the built server (tRPC mutation + SSE subscription), timed from the send to the `done` event; default agent and log level (info, stdout discarded). Server CPU per turn is the server process's user + system time (/proc) over all its turns, warm-up included: it does not depend on machine load the way latency does.",
        'Floor: the same graph (`createAgentGraph` with `AgentTurn` steps, built as `RunManager` builds it: same provider config, tools, breaker, usage meter, local sandbox) invoked in the bench process with `MemorySaver`, events collected in an array. It skips storage (user message, run rows, checkpoint + message projection), the event log and the network to the client.',
        'The in-memory-storage row is the same server with `COGNITION_PERSISTENCE_BACKEND=memory`: it separates the cost of the database from that of the API, event streaming and run bookkeeping, so it has no goal.',
        'The floor and the three servers take turns call by call (rotating order), so machine load hits all of them alike; all servers stay up during the whole measurement.',
        `Peers (docs/benchmarks.md, Peers): the LangGraph.js API server (in-memory, what \`langgraph dev\` serves; a StateGraph of ChatOpenAI on the same fake model, a ToolNode with \`ls\`) driven by \`@langchain/langgraph-sdk\` (\`runs.stream\`, stream mode \`messages-tuple\`), and Mastra (an Agent with an \`ls\` tool, the AI SDK OpenAI-compatible provider on the same fake model, \`@mastra/memory\` on LibSQL or PostgreSQL, Mastra's Node server) driven by \`@mastra/client-js\` (\`agent.stream\`, read to \`finish\`). Each runs in its own process, on a fresh thread per turn (created beforehand, untimed); a turn counts only when the client saw one successful tool call and ${TURN_ANSWER_TOKENS} answer tokens. They take ${ctx.size(2, 50)} of the ${ctx.size(10, 100)} rounds (spread evenly), after the same warm-up. Each of our rows is compared with the peer on the nearest storage: SQLite with Mastra on LibSQL (a SQLite file), PostgreSQL with Mastra on PostgreSQL, in-memory with the LangGraph dev server (in-memory; its run queue polls for new runs, up to a second apart when idle, which dominates its latency).`,
      ],
    };
  } finally {
    await stopPeers(peers);
    for (const { agent } of started) await agent.cleanup();
    await fake.close();
  }
}

export const agentTurnBenchmark: Benchmark = {
  id: 1,
  title: 'A full turn: send → `done`, one tool call, 50 tokens',
  measuredAs:
    'latency from `messages.send` to the `done` event via the typed client (`streamMessage`), p50/p99, SQLite and PostgreSQL (and the in-memory backend, to separate storage costs)',
  comparedWith:
    'the same agent graph invoked in-process with an in-memory checkpointer (the floor); peers: Mastra on LibSQL and on PostgreSQL, the LangGraph.js API server (in-memory)',
  goal: 'p50 ≤ 1.5× the floor; ≤ 1.0× the peer on comparable storage',
  run,
};
