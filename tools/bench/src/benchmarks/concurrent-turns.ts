import { performance } from 'node:perf_hooks';
import { createCognitionClient } from '@cognition/client';
import { FakeOpenAIServer } from '@cognition/runtime/testing';
import { formatBytes, formatMs, formatRate, summarizeLatencies } from '../harness/stats';
import type { Benchmark, BenchContext, ResultRow } from '../harness/types';
import type { AgentServerProvider } from '../support/agent-server';
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

/**
 * `sessions` clients (one typed client per session, as separate users would have), started
 * together, each running `turns` turns back to back on its own session.
 */
async function runLoad(
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
    const users = [];
    for (let i = 0; i < sessions; i += 1) {
      const client = createCognitionClient({ url: `${agent.url}/trpc` });
      const session = await client.sessions.create.mutate({ title: `concurrent ${i}` });
      users.push({ client, sessionId: session.id });
    }
    const rssBeforeBytes = serverRssBytes(pid).current;
    const cpuBefore = processCpuMs(pid);
    const latencies: number[] = [];
    const errors = new Map<string, number>();
    const fail = (kind: string): void => void errors.set(kind, (errors.get(kind) ?? 0) + 1);
    ctx.log(`${provider}: ${sessions} sessions × ${turns} turns`);
    const started = performance.now();
    await Promise.all(
      users.map(async ({ client, sessionId }) => {
        for (let t = 0; t < turns; t += 1) {
          const turnStarted = performance.now();
          try {
            const shape = await streamTurn(
              client,
              sessionId,
              TURN_PROMPT,
              AbortSignal.timeout(TURN_GUARD_MS),
            );
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
  } finally {
    await agent.cleanup();
  }
}

function rowOf(label: string, sessions: number, turns: number, load: LoadResult): ResultRow {
  const errorCount = [...load.errors.values()].reduce((sum, n) => sum + n, 0);
  const turnsPerSecond = (load.latencies.length * 1000) / load.wallMs;
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
  comparedWith: '—',
  goal: 'report; 0 errors',
  async run(ctx) {
    const sessions = ctx.size(5, 200);
    // One turn per session at full size keeps both providers within the time budget (the 200
    // turns of a round finish together, ~25 s on 2 shared cores); smoke runs two back to back so
    // a session's second turn under concurrency stays covered.
    const turns = ctx.size(2, 1);
    const fake = await FakeOpenAIServer.start({ fallback: toolThenAnswer(TURN_ANSWER_TOKENS) });
    try {
      const rows = [
        rowOf('SQLite', sessions, turns, await runLoad(ctx, 'sqlite', fake, sessions, turns)),
        rowOf(
          'PostgreSQL',
          sessions,
          turns,
          await runLoad(ctx, 'postgresql', fake, sessions, turns),
        ),
      ];
      return {
        rows,
        notes: [
          `Each of ${sessions} sessions has its own typed client (\`@cognition/client\`, so no request batching across sessions) and runs ${turns === 1 ? 'one turn' : `${turns} turns back to back`} with \`streamMessage\`; all sessions start together. A turn is the one of benchmark 1: \`ls\` tool call, then a ${TURN_ANSWER_TOKENS}-word answer from the fake OpenAI-compatible model (zero delay) in the bench process.`,
          'turns/s = successful turns / wall time from the first send to the last `done`; latencies are per turn, send → `done`. The bench process (clients and fake model) shares the 2 cores with the server, so the figures are a lower bound of what the server alone could do.',
          'An error is any turn that did not end in `done` with the scripted events: an `error` event, a rejected send or subscription (e.g. 409 `RUN_IN_PROGRESS`, 5xx), or no terminal event within 120 s. Errors are listed by kind in the row.',
          'RSS is the server process: before the load (after the sessions were created), and the peak (VmHWM, since the process started) read from /proc after it. Server CPU per turn is its user + system time during the load (/proc/<pid>/stat) over the turns: unlike wall time it does not depend on what else the machine runs.',
        ],
      };
    } finally {
      await fake.close();
    }
  },
};
