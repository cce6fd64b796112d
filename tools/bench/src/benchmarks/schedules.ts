import { mkdirSync } from 'node:fs';
import path from 'node:path';
import { randomUUID } from 'node:crypto';
import { FakeOpenAIServer } from '@cognition/runtime/testing/http';
import { createTestDatabase } from '@cognition/storage-prisma/testing';
import pg from 'pg';
import { formatLatency, summarizeLatencies } from '../harness/stats';
import type { Benchmark, BenchContext, ResultRow } from '../harness/types';
import { fakeProviderEnv } from '../support/agent-server';
import type { BenchServer } from '../support/server-process';
import { serverEnvFor, startServer } from '../support/server-process';

/**
 * Benchmark 18: scheduled runs (issue 29). `count` one-shot schedules, each starting a new
 * session of the default agent, due spread evenly over one minute, fired by one node and by
 * three (separate processes on one PostgreSQL; Redis for the runs' live fan-out, as a cluster
 * runs). What is measured is the scheduler: the lag from each occurrence's due time to its run
 * (the claim, the session, the admission: the run row exists, queued for a run slot), the
 * duplicates (runs or sessions beyond one per schedule), and the database work per firing from
 * `pg_stat_database` (commits and rows written). The fake model holds every model call open, so
 * the runs' turns take no CPU: how fast admitted runs then execute is the run machinery's
 * throughput (benchmark 3), not the scheduler's, and on two shared cores 10,000 turns a minute
 * are out of reach whatever the scheduler does.
 */

const REDIS_URL = process.env['COGNITION_TEST_REDIS_URL'] ?? 'redis://127.0.0.1:6379';
/** `COGNITION_SCHEDULES_LOOKAHEAD_SECONDS` for the nodes, when set for the bench (else theirs). */
const LOOKAHEAD = process.env['COGNITION_SCHEDULES_LOOKAHEAD_SECONDS'];
/** The lag goal on three nodes (the issue's): p99 from due time to the run ≤ 1 s. */
const GOAL_P99_MS = 1000;

interface Figures {
  /** Firings with their run. */
  fired: number;
  /** Firings claimed (some may still be starting their run). */
  fires: number;
  runs: number;
  sessions: number;
  misfires: number;
  lag: number[];
  /** Due time → the claim (the rest of the lag is the session and the admission). */
  claimLag: number[];
  commits: number;
  rowsWritten: number;
  nodesFiring: number;
}

/** The database's commit and write counters (flushed by the backends when their nodes stop). */
async function dbCounters(client: pg.Client): Promise<{ commits: number; rows: number }> {
  const res = await client.query<{ commits: string; rows: string }>(
    `SELECT xact_commit AS commits, tup_inserted + tup_updated + tup_deleted AS rows
     FROM pg_stat_database WHERE datname = current_database()`,
  );
  const row = res.rows[0];
  return { commits: Number(row?.commits ?? 0), rows: Number(row?.rows ?? 0) };
}

/** Inserts `count` one-shot schedules due from `firstDue` on, spread evenly over `spreadMs`. */
async function seed(client: pg.Client, count: number, firstDue: number, spreadMs: number) {
  const target = JSON.stringify({
    kind: 'new_session',
    agentName: 'default',
    config: {},
    onRunCompleted: 'keep',
  });
  await client.query(
    `INSERT INTO schedules (id, scope, kind, expression, timezone, run_at, end_time, enabled,
       misfire, target, target_session_id, content, metadata, callback_url, multitask_strategy,
       next_fire_at, last_fired_at, created_at, updated_at)
     SELECT 'sch_bench_' || i, '{}', 'once', NULL, 'UTC', due, NULL, true, 'run_once', $1, NULL,
       'tick', '{}', NULL, 'enqueue', due, NULL, now(), now()
     FROM (SELECT i, to_timestamp(($2::bigint + (i * $3::bigint) / $4::bigint) / 1000.0)
             AT TIME ZONE 'UTC' AS due
           FROM generate_series(0, $4::bigint - 1) AS s(i)) AS d`,
    [target, firstDue, spreadMs, count],
  );
}

/** Firings with a run so far. */
async function firedCount(client: pg.Client): Promise<number> {
  const res = await client.query<{ n: string }>(
    'SELECT count(*) AS n FROM schedule_fires WHERE run_id IS NOT NULL',
  );
  return Number(res.rows[0]?.n ?? 0);
}

async function measure(
  ctx: BenchContext,
  fake: FakeOpenAIServer,
  nodeCount: number,
  count: number,
): Promise<Figures> {
  const db = await createTestDatabase('postgresql');
  if (db.provider !== 'postgresql') throw new Error('expected a PostgreSQL database');
  const workspace = path.join(ctx.tmpDir, `schedules-${nodeCount}`);
  mkdirSync(workspace, { recursive: true });
  const prefix = `cognition-bench:${randomUUID()}:`;
  const nodes: BenchServer[] = [];
  const client = new pg.Client({ connectionString: db.url });
  try {
    for (let i = 0; i < nodeCount; i += 1) {
      nodes.push(
        await startServer({
          repoRoot: ctx.repoRoot,
          profileDir: ctx.profileDir,
          env: {
            ...serverEnvFor(db, workspace),
            ...fakeProviderEnv(fake),
            COGNITION_REDIS_URL: REDIS_URL,
            COGNITION_REDIS_KEY_PREFIX: prefix,
            COGNITION_NODE_ID: `node-${i + 1}`,
            COGNITION_LOG_LEVEL: 'warn',
            // Few held model calls per node; every other admitted run waits for a slot.
            COGNITION_MAX_CONCURRENT_RUNS: '2',
            // Every node holds model calls open when the case ends: nothing to wait for.
            COGNITION_SHUTDOWN_GRACE_SECONDS: '1',
            // The scheduler's look-ahead under test, when the bench is run with one.
            ...(LOOKAHEAD !== undefined
              ? { COGNITION_SCHEDULES_LOOKAHEAD_SECONDS: LOOKAHEAD }
              : {}),
          },
        }),
      );
    }
    await client.connect();
    const spreadMs = ctx.size(2_000, 60_000);
    // The first due time leaves the seeding (about a second per 10,000 rows) behind it.
    const firstDue = Math.ceil((Date.now() + ctx.size(2_000, 5_000)) / 1000) * 1000;
    await seed(client, count, firstDue, spreadMs);
    const before = await dbCounters(client);
    ctx.log(
      `${nodeCount} node(s): ${count} schedules due from ${new Date(firstDue).toISOString()}`,
    );
    const deadline = firstDue + spreadMs + ctx.size(60_000, 1_500_000);
    let fired = 0;
    // Past the limit the case reports what fired so far (its row then fails), not nothing.
    while (fired < count && Date.now() < deadline) {
      await new Promise((resolve) => setTimeout(resolve, 1000));
      fired = await firedCount(client);
    }
    // Stopped nodes have flushed their backends' statistics.
    await Promise.all(nodes.map((node) => node.stop()));
    await new Promise((resolve) => setTimeout(resolve, 1000));
    const after = await dbCounters(client);
    const lags = await client.query<{ lag: number; claim: number; reason: string }>(
      `SELECT EXTRACT(EPOCH FROM (r.created_at - f.due_at)) * 1000 AS lag,
              EXTRACT(EPOCH FROM (f.claimed_at - f.due_at)) * 1000 AS claim, f.reason
       FROM schedule_fires f JOIN runs r ON r.id = f.run_id`,
    );
    const totals = await client.query<{
      runs: string;
      sessions: string;
      fires: string;
      nodes: string;
    }>(
      `SELECT (SELECT count(*) FROM runs) AS runs, (SELECT count(*) FROM sessions) AS sessions,
              (SELECT count(*) FROM schedule_fires) AS fires,
              (SELECT count(DISTINCT node_id) FROM schedule_fires) AS nodes`,
    );
    const t = totals.rows[0];
    return {
      fired: lags.rows.length,
      fires: Number(t?.fires ?? 0),
      runs: Number(t?.runs ?? 0),
      sessions: Number(t?.sessions ?? 0),
      misfires: lags.rows.filter((r) => r.reason === 'misfire').length,
      lag: lags.rows.map((r) => Math.max(0, Number(r.lag))),
      claimLag: lags.rows.map((r) => Math.max(0, Number(r.claim))),
      commits: (after.commits - before.commits) / Math.max(1, lags.rows.length),
      rowsWritten: (after.rows - before.rows) / Math.max(1, lags.rows.length),
      nodesFiring: Number(t?.nodes ?? 0),
    };
  } finally {
    await client.end().catch(() => undefined);
    await Promise.all(nodes.map((node) => node.stop()));
    await db.cleanup();
  }
}

function row(nodeCount: number, count: number, f: Figures): ResultRow {
  const lag = summarizeLatencies(f.lag);
  const claim = summarizeLatencies(f.claimLag);
  // Every run belongs to a firing; a second run of one occurrence would be one more run.
  const duplicates = f.runs - f.fired;
  const failures = [
    ...(duplicates !== 0 ? [`${duplicates} duplicate run(s)`] : []),
    ...(f.sessions > f.fires ? [`${f.sessions} sessions for ${f.fires} firings`] : []),
    ...(f.fired < count ? [`only ${f.fired} of ${count} fired within the time limit`] : []),
  ];
  return {
    case: `${count.toLocaleString('en-US')} schedules, ${nodeCount} node${nodeCount > 1 ? 's' : ''}`,
    figures:
      `due → run ${formatLatency(lag)} · max ${(Math.max(...f.lag) / 1000).toFixed(2)} s · ` +
      `due → claimed p50 ${(claim.p50 / 1000).toFixed(2)} s · p99 ${(claim.p99 / 1000).toFixed(2)} s · ` +
      `duplicates ${duplicates} · misfires ${f.misfires} · ` +
      `${f.commits.toFixed(1)} commits, ${f.rowsWritten.toFixed(0)} rows written per firing · ` +
      `fired by ${f.nodesFiring} node(s)`,
    metrics: {
      lagP50Ms: lag.p50,
      lagP99Ms: lag.p99,
      lagMaxMs: Math.max(...f.lag),
      claimP99Ms: claim.p99,
      duplicates: Math.abs(duplicates),
      misfires: f.misfires,
      commitsPerFiring: f.commits,
      rowsWrittenPerFiring: f.rowsWritten,
      nodesFiring: f.nodesFiring,
    },
    ...(failures.length > 0 ? { failure: failures.join('; ') } : {}),
  };
}

export const schedulesBenchmark: Benchmark = {
  id: 18,
  name: 'schedules',
  // 10,000 firings on one node and on three take minutes (25 at most per case): run with
  // --only schedules, not in every full run (which has to fit 15 minutes).
  standalone: true,
  title: 'Scheduled runs: 10,000 schedules due in one minute, one node and three',
  measuredAs:
    'one-shot schedules (a new session each) due evenly over one minute on PostgreSQL; lag from due time to the run admitted, duplicates, database commits and rows written per firing',
  comparedWith: '—',
  goal: `three nodes: p99 due → run ≤ ${GOAL_P99_MS / 1000} s, 0 duplicates`,
  async run(ctx: BenchContext) {
    const count = ctx.size(30, 10_000);
    // Every model call held open: the runs' turns take no CPU from the scheduler (above).
    const fake = await FakeOpenAIServer.start({ fallback: { text: 'held', hangAfterChunks: 0 } });
    const rows: ResultRow[] = [];
    try {
      for (const nodeCount of [1, 3]) {
        const figures = await measure(ctx, fake, nodeCount, count);
        const result = row(nodeCount, count, figures);
        const p99 = result.metrics['lagP99Ms'] ?? 0;
        if (nodeCount === 3 && p99 > GOAL_P99_MS && !ctx.smoke) {
          result.figures += ` · goal missed (p99 ${(p99 / 1000).toFixed(2)} s > 1 s)`;
        }
        rows.push(result);
        ctx.log(`${result.case}: ${result.figures}`);
      }
    } finally {
      await fake.close();
    }
    return {
      rows,
      notes: [
        `${count.toLocaleString('en-US')} one-shot schedules per case, due evenly over ${ctx.size('2 s', 'one minute')}, inserted in SQL; each firing creates a session and admits a run; the fake model holds every call open (2 run slots per node), so turns take no CPU`,
        'lag: due time → the run row (the claim, the session and the admission), from the database',
        'database work: pg_stat_database commits (read-only ones included: the nodes’ polls) and rows inserted + updated + deleted from the seeding to the nodes stopped, per firing',
      ],
    };
  },
};
