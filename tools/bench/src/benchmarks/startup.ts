import { mkdirSync } from 'node:fs';
import path from 'node:path';
import { createTestDatabase } from '@cognition/storage-prisma/testing';
import { formatLatency, summarizeLatencies } from '../harness/stats';
import type { Benchmark, BenchContext, ResultRow } from '../harness/types';
import { ensureServerBuilt, serverEnvFor, startServer } from '../support/server-process';

type Provider = 'sqlite' | 'postgresql';

/** Spawn → `/ready` 200, for a first start (empty database, migrations run) and restarts. */
async function measureProvider(ctx: BenchContext, provider: Provider): Promise<ResultRow[]> {
  const label = provider === 'sqlite' ? 'SQLite' : 'PostgreSQL';
  const firstStarts: number[] = [];
  const restarts: number[] = [];
  const cycles = ctx.size(1, 3);
  const restartsPerCycle = ctx.size(2, 4);
  for (let cycle = 0; cycle < cycles; cycle += 1) {
    const db = await createTestDatabase(provider);
    const workspace = path.join(ctx.tmpDir, `${provider}-${cycle}`);
    mkdirSync(workspace, { recursive: true });
    try {
      const env = serverEnvFor(db, workspace);
      const first = await startServer({ repoRoot: ctx.repoRoot, env, profileDir: ctx.profileDir });
      await first.stop();
      firstStarts.push(first.readyMs);
      for (let i = 0; i < restartsPerCycle; i += 1) {
        const server = await startServer({
          repoRoot: ctx.repoRoot,
          env,
          profileDir: ctx.profileDir,
        });
        await server.stop();
        restarts.push(server.readyMs);
      }
      ctx.log(`${label} cycle ${cycle + 1}/${cycles} done`);
    } finally {
      await db.cleanup();
    }
  }
  const first = summarizeLatencies(firstStarts);
  const again = summarizeLatencies(restarts);
  return [
    {
      case: `${label}, first start (empty database: migrations run)`,
      figures: formatLatency(first),
      metrics: { p50Ms: first.p50, p99Ms: first.p99, samples: first.samples },
    },
    {
      case: `${label}, restart (migrated database)`,
      figures: formatLatency(again),
      metrics: { p50Ms: again.p50, p99Ms: again.p99, samples: again.samples },
    },
  ];
}

export const startupBenchmark: Benchmark = {
  id: 8,
  title: 'Startup: process start → /ready 200',
  measuredAs:
    'wall time from spawning `node dist/apps/server/main.js` to the first `GET /ready` answered 200 (polled every 5 ms), SQLite and PostgreSQL',
  comparedWith: '—',
  goal: 'report',
  async run(ctx) {
    await ensureServerBuilt(ctx.repoRoot);
    const rows = [
      ...(await measureProvider(ctx, 'sqlite')),
      ...(await measureProvider(ctx, 'postgresql')),
    ];
    return {
      rows,
      notes: [
        'Each start spawns a fresh Node process on the built bundle with the default log level (info, stdout discarded) and the local sandbox; the server is stopped with SIGTERM between starts.',
        'A first start migrates an empty database (a fresh SQLite file / a fresh `cognition_t_*` PostgreSQL database); restarts find it migrated and only check the migrations and projections.',
      ],
    };
  },
};
