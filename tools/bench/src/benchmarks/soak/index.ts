import { mkdirSync, readdirSync, readlinkSync } from 'node:fs';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { FakeOpenAIServer } from '@cognition/runtime/testing/http';
import type { RecordedRequest } from '@cognition/runtime/testing/http';
import { createTestDatabase } from '@cognition/storage-prisma/testing';
import pg from 'pg';
import type { Benchmark, BenchContext, ResultRow } from '../../harness/types';
import { fakeProviderEnv } from '../../support/agent-server';
import { ensureServerBuilt, serverEnvFor, startServer } from '../../support/server-process';
import type { LoadCounts } from './load';
import { heapAfterGc, heapProbeNodeOptions } from './heap-probe';
import { LoadGate, loadWorker } from './load';
import { soakSvg } from './plot';
import type { ResourceSample } from './samples';
import { SERIES, metricValue, shown, trendGrowth } from './samples';

/** Growth allowed on every series after the warm-up (the issue's goal). */
const MAX_GROWTH = 0.1;
/** Concurrent load workers per server. */
const WORKERS = 4;

const LONG = Array.from({ length: 30 }, (_, i) => ` word${i}`);

/** The fake model: a tool call for plain work, long or slow answers when asked, else short text. */
function reply(request: RecordedRequest) {
  const messages = request.body.messages ?? [];
  const last = messages.at(-1);
  if (last?.role === 'tool') return { text: 'The answer is ready now.' };
  const asked = typeof last?.content === 'string' ? last.content : '';
  if (asked.includes('long answer')) return { text: LONG, chunkDelayMs: 20 };
  if (asked.includes('slow answer'))
    return { text: 'A slow and steady answer.', chunkDelayMs: 300 };
  return { toolCalls: [{ name: 'execute', args: { command: 'echo soak' } }] };
}

interface Contender {
  name: string;
  url: string;
  pid: number;
  /** The V8 heap used right after a full GC (the server runs with the heap probe). */
  heapAfterGc(): Promise<number>;
  connections(): Promise<number>;
  samples: ResourceSample[];
  counts: LoadCounts;
  /** Holds this server's load for a quiesced reading. */
  gate: LoadGate;
  stop(): Promise<void>;
}

/** Handles the server process holds on its SQLite file (and its -wal / -shm). */
function sqliteHandles(pid: number, file: string): number {
  let n = 0;
  for (const fd of readdirSync(`/proc/${pid}/fd`)) {
    try {
      if (readlinkSync(`/proc/${pid}/fd/${fd}`).startsWith(file)) n += 1;
    } catch {
      // closed meanwhile
    }
  }
  return n;
}

/** The metrics page of a server. */
async function metrics(contender: Contender): Promise<string> {
  return (await fetch(`${contender.url}/metrics`)).text();
}

/**
 * How long the load stays held before the timers are counted: past the PostgreSQL pool's idle
 * timeout (10 s, one timer per idle pooled connection), so what is counted is what outlives the
 * work — a leak — not the work in flight (streams' heartbeats, requests, pooled connections).
 */
const QUIET_MS = 11_000;

/**
 * The readings of a quiesced instant, the load held (no action in flight) for QUIET_MS: the
 * active timers, and the V8 heap after a full GC (what the server retains, not the garbage of
 * the work that just ended).
 */
async function quiesced(
  contender: Contender,
): Promise<Pick<ResourceSample, 'activeTimers' | 'heapAfterGcBytes'>> {
  await contender.gate.pause();
  try {
    await new Promise((resolve) => setTimeout(resolve, QUIET_MS));
    const activeTimers = metricValue(
      await metrics(contender),
      'nodejs_active_resources',
      'type="Timeout"',
    );
    return { activeTimers, heapAfterGcBytes: await contender.heapAfterGc() };
  } finally {
    contender.gate.resume();
  }
}

async function sample(contender: Contender, startedAt: number): Promise<ResourceSample> {
  const page = await metrics(contender);
  const atMs = performance.now() - startedAt;
  const dbConnections = await contender.connections();
  return {
    atMs,
    rssBytes: metricValue(page, 'process_resident_memory_bytes'),
    openFds: metricValue(page, 'process_open_fds'),
    dbConnections,
    loopDelayP99Ms: metricValue(page, 'nodejs_eventloop_lag_p99_seconds') * 1000,
    ...(await quiesced(contender)),
  };
}

async function startContender(
  ctx: BenchContext,
  provider: 'sqlite' | 'postgresql',
  fake: FakeOpenAIServer,
  cleanups: (() => Promise<void>)[],
): Promise<Contender> {
  const db = await createTestDatabase(provider);
  cleanups.push(() => db.cleanup());
  const workspace = path.join(ctx.tmpDir, provider);
  mkdirSync(workspace, { recursive: true });
  const server = await startServer({
    repoRoot: ctx.repoRoot,
    profileDir: ctx.profileDir,
    env: {
      ...serverEnvFor(db, workspace),
      ...fakeProviderEnv(fake),
      COGNITION_LOG_LEVEL: 'warn',
      NODE_OPTIONS: heapProbeNodeOptions(ctx.repoRoot),
    },
  });
  cleanups.push(() => server.stop());
  const pid = server.child.pid ?? 0;
  let connections: () => Promise<number>;
  if (db.provider === 'postgresql') {
    const name = new URL(db.url).pathname.slice(1);
    const probe = new pg.Client({ connectionString: db.url });
    await probe.connect();
    cleanups.push(() => probe.end());
    connections = async () =>
      Number(
        (
          await probe.query<{ n: string }>(
            'SELECT count(*) AS n FROM pg_stat_activity WHERE datname = $1 AND pid <> pg_backend_pid()',
            [name],
          )
        ).rows[0]?.n ?? 0,
      );
  } else {
    const file = db.path;
    connections = () => Promise.resolve(sqliteHandles(pid, file));
  }
  return {
    name: provider === 'sqlite' ? 'SQLite' : 'PostgreSQL',
    url: server.url,
    pid,
    heapAfterGc: () => heapAfterGc(server.child),
    connections,
    samples: [],
    counts: { actions: new Map(), errors: new Map() },
    gate: new LoadGate(),
    stop: () => server.stop(),
  };
}

function describeCounts(counts: LoadCounts): string {
  const actions = [...counts.actions].map(([k, v]) => `${k} ${v}`).join(', ');
  const errors = [...counts.errors].map(([k, v]) => `${v}× ${k}`).join('; ');
  return `${actions}${errors ? `; errors: ${errors}` : '; 0 errors'}`;
}

export const soakBenchmark: Benchmark = {
  id: 17,
  name: 'soak',
  standalone: true,
  title: 'Soak: one node on SQLite and one on PostgreSQL under a steady mixed load for 30 minutes',
  measuredAs:
    'the built server under 4 concurrent load workers each (turns with a tool call, reconnects with Last-Event-ID, aborts, list/search/stats/activity reads, artifact writes, idle followers of slow runs; sessions rotated and deleted); every minute RSS, open fds, database connections and event-loop delay p99 under the load, then, with the load held 11 s (nothing in flight: what outlives the work), active timers and the V8 heap used right after a full GC (a preloaded probe, on SIGUSR2); growth = the least-squares trend over the time after the warm-up',
  comparedWith: '—',
  goal: 'growth < 10 % on every series after a 5-minute warm-up; 0 load errors',
  async run(ctx) {
    await ensureServerBuilt(ctx.repoRoot);
    // The smoke size proves the machinery (load, samples, trend), not the absence of growth.
    const minutes = ctx.minutes ?? ctx.size(0.25, 30);
    const totalMs = minutes * 60_000;
    const warmupMs = Math.min(5 * 60_000, totalMs / 6);
    const everyMs = ctx.smoke ? 1_500 : Math.min(60_000, totalMs / 20);
    const fake = await FakeOpenAIServer.start({ fallback: reply });
    const cleanups: (() => Promise<void>)[] = [() => fake.close()];
    try {
      const contenders = [
        await startContender(ctx, 'sqlite', fake, cleanups),
        await startContender(ctx, 'postgresql', fake, cleanups),
      ];
      const startedAt = performance.now();
      const until = (): boolean => performance.now() - startedAt >= totalMs;
      const workers = contenders.flatMap((c) =>
        Array.from({ length: WORKERS }, () => loadWorker(c.url, until, c.counts, c.gate)),
      );
      const sampler = (async () => {
        for (let next = 0; !until(); next += everyMs) {
          const wait = startedAt + next - performance.now();
          if (wait > 0) await new Promise((resolve) => setTimeout(resolve, wait));
          // Both servers at once: each is held for its quiesced timer count in parallel.
          const taken = await Promise.all(contenders.map((c) => sample(c, startedAt)));
          contenders.forEach((c, i) => c.samples.push(taken[i] as ResourceSample));
          ctx.log(`soak: ${(next / 60_000).toFixed(1)} of ${minutes} min`);
        }
      })();
      // No reading after the load: an idle server is another regime (every pooled connection
      // idle, each with its idle timer), and it skewed the trend of the run of 2026-11-27.
      await Promise.all([...workers, sampler]);

      const rows: ResultRow[] = contenders.flatMap((c) => {
        const measured = c.samples.filter((s) => s.atMs >= warmupMs);
        const growth = Object.fromEntries(
          SERIES.map(({ key }) => [
            key,
            trendGrowth(measured.map((s) => ({ x: s.atMs, y: shown(key, s[key]) }))),
          ]),
        ) as Record<(typeof SERIES)[number]['key'], number>;
        // A smoke run is too short for a steady state: only its load errors count.
        const over = ctx.smoke ? [] : SERIES.filter(({ key }) => growth[key] >= MAX_GROWTH);
        const errors = [...c.counts.errors.values()].reduce((s, n) => s + n, 0);
        const last = c.samples.at(-1);
        const figures = SERIES.map(
          ({ key, label }) =>
            `${label} ${shown(key, last?.[key] ?? 0).toFixed(1)} (${(growth[key] * 100).toFixed(1)} %)`,
        ).join(' · ');
        const failure = [
          ...over.map(({ key, label }) => `${label} grew ${(growth[key] * 100).toFixed(1)} %`),
          ...(errors > 0 ? [`${errors} load errors`] : []),
        ];
        return [
          {
            case: `${c.name}: ${minutes} min, ${[...c.counts.actions.values()].reduce((s, n) => s + n, 0)} actions`,
            figures: `at the end (growth after warm-up): ${figures}`,
            metrics: {
              minutes,
              samples: c.samples.length,
              errors,
              ...Object.fromEntries(
                SERIES.map(({ key }) => [`${key}GrowthPct`, Math.max(0, growth[key] * 100)]),
              ),
            },
            ...(failure.length > 0 ? { failure: failure.join('; ') } : {}),
          },
        ];
      });
      return {
        rows,
        notes: [
          ...contenders.map((c) => `${c.name} load: ${describeCounts(c.counts)}.`),
          `Sampled every ${(everyMs / 1000).toFixed(0)} s; the first ${(warmupMs / 60_000).toFixed(1)} min are the warm-up (shaded in the plot). Growth is the least-squares trend over the rest: (fitted end − fitted start) / fitted start; a series that starts at 0 shows its fitted end instead. Database connections: PostgreSQL backends of the server's database (pg_stat_activity), SQLite handles the process holds on the database file and its -wal/-shm.`,
          '![Soak: resources per minute](benchmarks/soak.svg)',
        ],
        files: [{ name: 'soak.svg', content: soakSvg(contenders, warmupMs) }],
      };
    } finally {
      for (const cleanup of cleanups.reverse()) await cleanup().catch(() => undefined);
    }
  },
};
