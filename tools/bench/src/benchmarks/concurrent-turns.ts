import { performance } from 'node:perf_hooks';
import { createCognitionClient } from '@cognition/client';
import { FakeOpenAIServer } from '@cognition/runtime/testing/http';
import { compare, formatBytes, formatMs, formatRate, summarizeLatencies } from '../harness/stats';
import type { Benchmark, BenchContext, Comparison, ResultRow } from '../harness/types';
import { LANGGRAPH_WORKERS } from '../peers/langgraph';
import type { PeerServer } from '../peers/peer';
import { ALL_PEERS, startPeers, stopPeers } from '../peers/start';
import type { AgentServerProvider, TurnShape } from '../support/agent-server';
import { processCpuMs } from '../support/process-cpu';
import {
  serverRssBytes,
  startAgentServer,
  streamTurn,
  toolThenAnswer,
  TURN_ANSWER_TOKENS,
  TURN_PROMPT,
  turnProblem,
} from '../support/agent-server';

/**
 * A turn still running after this long is counted as an error (`timeout`) rather than left to
 * hang the run: it is a guard against a stuck stream, far above any turn latency seen, not a
 * latency requirement.
 */
const TURN_GUARD_MS = 120_000;

/** A failed turn's kind: the error code the client got, or what went wrong. */
function errorKind(error: unknown): string {
  const data = (error as { data?: { code?: unknown; httpStatus?: unknown } } | null)?.data;
  if (data && typeof data.code === 'string') {
    return typeof data.httpStatus === 'number' ? `${data.code} (${data.httpStatus})` : data.code;
  }
  if (error instanceof DOMException && error.name === 'TimeoutError') return 'timeout';
  return error instanceof Error ? `${error.name}: ${error.message.slice(0, 120)}` : String(error);
}

interface LoadResult {
  latencies: number[];
  errors: Map<string, number>;
  wallMs: number;
  rssBeforeBytes: number;
  rssAfterBytes: number;
  peakRssBytes: number;
  /** CPU time the server process used during the load (user + system). */
  serverCpuMs: number;
}

/** One user's next turn on its own session, ended by `signal` (the guard). */
type User = (signal: AbortSignal) => Promise<TurnShape>;

/**
 * `users` (one per session), started together, each running `turns` turns back to back, against
 * the server process `pid`.
 */
async function runLoad(
  ctx: BenchContext,
  label: string,
  pid: number,
  users: readonly User[],
  turns: number,
): Promise<LoadResult> {
  const rssBeforeBytes = serverRssBytes(pid).current;
  const cpuBefore = processCpuMs(pid);
  const latencies: number[] = [];
  const errors = new Map<string, number>();
  const fail = (kind: string): void => void errors.set(kind, (errors.get(kind) ?? 0) + 1);
  ctx.log(`${label}: ${users.length} sessions × ${turns} turns`);
  const started = performance.now();
  await Promise.all(
    users.map(async (user) => {
      for (let t = 0; t < turns; t += 1) {
        const turnStarted = performance.now();
        try {
          const shape = await user(AbortSignal.timeout(TURN_GUARD_MS));
          const problem = turnProblem(shape, TURN_ANSWER_TOKENS);
          if (problem === null) latencies.push(performance.now() - turnStarted);
          else fail(shape.terminal === 'done' ? 'wrong events' : shape.terminal);
        } catch (error) {
          fail(errorKind(error));
        }
      }
    }),
  );
  const wallMs = performance.now() - started;
  const serverCpuMs = processCpuMs(pid) - cpuBefore;
  const rss = serverRssBytes(pid);
  return {
    latencies,
    errors,
    wallMs,
    rssBeforeBytes,
    rssAfterBytes: rss.current,
    peakRssBytes: rss.peak,
    serverCpuMs,
  };
}

/** Our built server on `provider`: one typed client per session, as separate users would have. */
async function loadOurs(
  ctx: BenchContext,
  provider: AgentServerProvider,
  fake: FakeOpenAIServer,
  sessions: number,
  turns: number,
): Promise<LoadResult> {
  const agent = await startAgentServer(ctx, { provider, fake });
  try {
    const pid = agent.server.child.pid;
    if (pid === undefined) throw new Error('the server process has no pid');
    const users: User[] = [];
    for (let i = 0; i < sessions; i += 1) {
      const client = createCognitionClient({ url: `${agent.url}/trpc` });
      const session = await client.sessions.create.mutate({ title: `concurrent ${i}` });
      users.push((signal) => streamTurn(client, session.id, TURN_PROMPT, signal));
    }
    return await runLoad(ctx, provider, pid, users, turns);
  } finally {
    await agent.cleanup();
  }
}

/**
 * A peer with its own client, one thread per session. Its clients take no abort signal here: the
 * guard rejects the turn instead (the peer's stream is left to end with the process).
 */
async function loadPeer(
  ctx: BenchContext,
  peer: PeerServer,
  sessions: number,
  turns: number,
): Promise<LoadResult> {
  const users: User[] = [];
  for (let i = 0; i < sessions; i += 1) {
    const thread = await peer.newThread();
    users.push(async (signal) => {
      const guard = new Promise<never>((_, reject) =>
        signal.addEventListener('abort', () => reject(signal.reason as Error), { once: true }),
      );
      return (await Promise.race([peer.turn(thread, TURN_PROMPT), guard])).shape;
    });
  }
  return runLoad(ctx, peer.label, peer.pid, users, turns);
}

function turnsPerSecondOf(load: LoadResult): number {
  return (load.latencies.length * 1000) / load.wallMs;
}

function errorCountOf(load: LoadResult): number {
  return [...load.errors.values()].reduce((sum, n) => sum + n, 0);
}

/** Ours / a peer's turns/s (goal ≥ 1.0×), the peer's figures (errors and p99 included) shown. */
function comparePeer(
  ours: LoadResult,
  peer: PeerServer,
  load: LoadResult,
  sessions: number,
  turns: number,
): Comparison {
  const figures = rowOf(peer.label, sessions, turns, load).figures;
  const errors = [...load.errors].map(([kind, n]) => `${kind} ×${n}`).join('; ');
  return compare(
    turnsPerSecondOf(ours),
    turnsPerSecondOf(load),
    peer.label,
    errors === '' ? figures : `${figures} (${errors})`,
    { kind: 'at-least', ratio: 1 },
  );
}

function rowOf(label: string, sessions: number, turns: number, load: LoadResult): ResultRow {
  const errorCount = errorCountOf(load);
  const turnsPerSecond = turnsPerSecondOf(load);
  const metrics: Record<string, number> = {
    turnsPerSecond,
    errors: errorCount,
    turns: sessions * turns,
    wallMs: load.wallMs,
    rssBeforeBytes: load.rssBeforeBytes,
    rssAfterBytes: load.rssAfterBytes,
    peakRssBytes: load.peakRssBytes,
    serverCpuMsPerTurn: load.serverCpuMs / (sessions * turns),
  };
  const parts = [formatRate(turnsPerSecond, 'turns/s')];
  if (load.latencies.length > 0) {
    const summary = summarizeLatencies(load.latencies);
    metrics['p50Ms'] = summary.p50;
    metrics['p99Ms'] = summary.p99;
    parts.push(`p50 ${formatMs(summary.p50)}`, `p99 ${formatMs(summary.p99)}`);
  }
  parts.push(
    `${errorCount} errors`,
    `peak RSS ${formatBytes(load.peakRssBytes)}`,
    `server CPU ${formatMs(load.serverCpuMs / (sessions * turns))}/turn`,
  );
  const figures = parts.join(' · ');
  const row: ResultRow = {
    case: `${label}, ${sessions} sessions × ${turns} ${turns === 1 ? 'turn' : 'turns'} at once`,
    figures,
    metrics,
  };
  if (errorCount > 0) {
    row.failure = `${errorCount} of ${sessions * turns} turns failed: ${[...load.errors]
      .map(([kind, n]) => `${kind} ×${n}`)
      .join('; ')}`;
  }
  return row;
}

export const concurrentTurnsBenchmark: Benchmark = {
  id: 3,
  title: '200 sessions running turns at once',
  measuredAs:
    'turns/s, p50/p99 turn latency (send → `done`, typed client), errors and peak server RSS (VmHWM) with every session running turns at the same time, SQLite and PostgreSQL',
  comparedWith:
    'peers: Mastra (LibSQL, PostgreSQL) and the LangGraph.js API server (in-memory) under the same load',
  goal: '0 errors; turns/s ≥ 1.0× the fastest peer',
  async run(ctx) {
    const sessions = ctx.size(5, 200);
    // One turn per session at full size keeps both providers within the time budget (the 200
    // turns of a round finish together, ~25 s on 2 shared cores); smoke runs two back to back so
    // a session's second turn under concurrency stays covered.
    const turns = ctx.size(2, 1);
    const fake = await FakeOpenAIServer.start({ fallback: toolThenAnswer(TURN_ANSWER_TOKENS) });
    // Peers at full sizes only: the smoke run measures them in benchmark 1.
    const peers = await startPeers(ctx, fake.baseUrl, ctx.smoke ? [] : ALL_PEERS).catch(
      async (error: unknown) => {
        await fake.close();
        throw error;
      },
    );
    try {
      const ours = [
        { label: 'SQLite', load: await loadOurs(ctx, 'sqlite', fake, sessions, turns) },
        { label: 'PostgreSQL', load: await loadOurs(ctx, 'postgresql', fake, sessions, turns) },
      ];
      const peerLoads: { peer: PeerServer; load: LoadResult }[] = [];
      for (const peer of peers.values()) {
        peerLoads.push({ peer, load: await loadPeer(ctx, peer, sessions, turns) });
      }
      const rows = ours.map(({ label, load }): ResultRow => {
        const row = rowOf(label, sessions, turns, load);
        if (peerLoads.length === 0) return row;
        return {
          ...row,
          peers: peerLoads.map((peer) => comparePeer(load, peer.peer, peer.load, sessions, turns)),
        };
      });
      return {
        rows,
        notes: [
          `Each of ${sessions} sessions has its own typed client (\`@cognition/client\`, so no request batching across sessions) and runs ${turns === 1 ? 'one turn' : `${turns} turns back to back`} with \`streamMessage\`; all sessions start together. A turn is the one of benchmark 1: \`ls\` tool call, then a ${TURN_ANSWER_TOKENS}-word answer from the fake OpenAI-compatible model (zero delay) in the bench process.`,
          'turns/s = successful turns / wall time from the first send to the last `done`; latencies are per turn, send → `done`. The bench process (clients and fake model) shares the 2 cores with the server, so the figures are a lower bound of what the server alone could do.',
          'An error is any turn that did not end in `done` with the scripted events: an `error` event, a rejected send or subscription (e.g. 409 `RUN_IN_PROGRESS`, 5xx), or no terminal event within 120 s. Errors are listed by kind in the row.',
          'RSS is the server process: before the load (after the sessions were created), and the peak (VmHWM, since the process started) read from /proc after it. Server CPU per turn is its user + system time during the load (/proc/<pid>/stat) over the turns: unlike wall time it does not depend on what else the machine runs.',
          ctx.smoke
            ? 'Peers are measured at full sizes only (the smoke run measures them in benchmark 1).'
            : `Peers run the same load after ours, one at a time (all started once, idle meanwhile): ${sessions} threads, each turn the peer's own client (\`@langchain/langgraph-sdk\` \`runs.stream\`; \`@mastra/client-js\` \`agent.stream\`, one client for all sessions: neither batches requests), the same guard and the same check of the events. Each of our rows is compared with every peer on turns/s (goal ≥ 1.0×, i.e. at least the fastest peer); the peer's p99 and errors are in its figures. The LangGraph dev server runs ${LANGGRAPH_WORKERS} runs at a time (\`langgraph dev\`'s default \`--n-jobs-per-worker\`) and queues the rest.`,
        ],
      };
    } finally {
      await stopPeers(peers);
      await fake.close();
    }
  },
};
