import { mkdirSync } from 'node:fs';
import path from 'node:path';
import type { ChaosCluster, ChaosReport } from '@cognition/api/testing';
import { ChaosModel, runChaos, violations } from '@cognition/api/testing';
import type { Balancer, PrivateRedis } from '@cognition/cluster-redis/testing';
import { startBalancer, startPrivateRedis } from '@cognition/cluster-redis/testing';
import type { PrivatePostgres } from '@cognition/storage-prisma/testing';
import { startPrivatePostgres } from '@cognition/storage-prisma/testing';
import type { Benchmark, BenchContext, ResultRow } from '../harness/types';
import type { BenchServer } from '../support/server-process';
import { ensureServerBuilt, freePort, startServer } from '../support/server-process';
import { installClaimLog, readClaims } from './chaos-claims';

/**
 * Benchmark 16 (`chaos`, issue 31 item 1): the chaos run of `@cognition/api/testing` over
 * three built server processes behind HAProxy, on a PostgreSQL server and a Redis of the run
 * alone (started here, so restarting them disturbs nothing else). The `npm test` size is
 * apps/server-e2e/src/issue-31-chaos.int.spec.ts.
 */

/** The seed of a full run; the report and the notes name it. */
const SEED = Number(process.env['COGNITION_CHAOS_SEED'] ?? 31_001);
const NODES = 3;
/**
 * The run lease of the nodes: 2 s in a full run (the faults' outages outlast it, and so may a
 * starved node's renewal), 10 s at smoke size (which `npm test` runs beside the rest of the
 * suite); COGNITION_CHAOS_LEASE_SECONDS sets it.
 */
function leaseSeconds(ctx: BenchContext): number {
  return Number(process.env['COGNITION_CHAOS_LEASE_SECONDS'] ?? ctx.size(10, 2));
}

interface Resources {
  database?: PrivatePostgres;
  redis?: PrivateRedis;
  model?: ChaosModel;
  nodes: (BenchServer | null)[];
  balancer?: Balancer;
}

async function runOnce(ctx: BenchContext, resources: Resources): Promise<ChaosReport> {
  const database = startPrivatePostgres({ port: await freePort(), repoRoot: ctx.repoRoot });
  resources.database = database;
  const redis = await startPrivateRedis(await freePort());
  resources.redis = redis;
  const model = await ChaosModel.start({ answerWords: 12, chunkDelayMs: 10 });
  resources.model = model;
  const workspace = path.join(ctx.tmpDir, 'workspace');
  mkdirSync(workspace, { recursive: true });
  const ports: number[] = [];
  for (let i = 0; i < NODES; i += 1) ports.push(await freePort());
  const { nodes } = resources;
  const start = async (index: number) => {
    nodes[index] = await startServer({
      repoRoot: ctx.repoRoot,
      ...(ports[index] !== undefined ? { port: ports[index] } : {}),
      env: {
        COGNITION_WORKSPACE_ROOT: workspace,
        COGNITION_PERSISTENCE_BACKEND: 'postgres',
        COGNITION_PERSISTENCE_URI: database.url,
        COGNITION_REDIS_URL: redis.url,
        COGNITION_NODE_ID: `node-${index + 1}`,
        COGNITION_RUN_LEASE_SECONDS: String(leaseSeconds(ctx)),
        COGNITION_SHUTDOWN_GRACE_SECONDS: '1',
        COGNITION_LOG_LEVEL: 'warn',
        ...model.nodeEnv(index),
      },
    });
  };
  for (let i = 0; i < NODES; i += 1) await start(i);
  // The nodes migrated the database: from here every claim of a run is logged with its time.
  await installClaimLog(database.url);
  const balancer = await startBalancer({
    port: await freePort(),
    backends: ports.map((port, i) => ({ id: `node-${i + 1}`, port })),
    dir: ctx.tmpDir,
  });
  resources.balancer = balancer;
  const cluster: ChaosCluster = {
    url: balancer.url,
    size: NODES,
    async stopNode(index, signal) {
      const node = nodes[index];
      nodes[index] = null;
      if (signal === 'SIGKILL') node?.child.kill('SIGKILL');
      await node?.stop();
    },
    startNode: start,
    stopRedis: () => redis.stop(),
    startRedis: () => redis.start(),
    stopPostgres: () => database.stop(),
    startPostgres: () => database.start(),
    claims: () => readClaims(database.url),
  };
  // COGNITION_CHAOS_TURNS / COGNITION_CHAOS_FAULTS: a shorter (or longer) full run.
  const turns = Number(process.env['COGNITION_CHAOS_TURNS'] ?? ctx.size(20, 1_000));
  return runChaos({
    cluster,
    model,
    seed: SEED,
    sessions: ctx.size(4, 12),
    turns,
    faults: Number(process.env['COGNITION_CHAOS_FAULTS'] ?? ctx.size(4, 24)),
    faultWindowMs: ctx.size(8_000, 150_000),
    turnTimeoutMs: 90_000,
    log: (line) => ctx.log(line),
  });
}

function rowOf(report: ChaosReport): ResultRow {
  const bad = violations(report);
  const total = Object.values(bad).reduce((n, v) => n + v, 0);
  const failed = Object.values(report.failed).reduce((n, v) => n + v, 0);
  const nonZero = Object.entries(bad).filter(([, v]) => v > 0);
  return {
    case: `3 nodes behind HAProxy, PostgreSQL + Redis: ${report.turns} turns, ${report.faultsInjected} faults`,
    figures:
      `turns ${report.turns} (done ${report.completed}, error ${failed}) · faults ${report.faultsInjected} ` +
      `(${Object.entries(report.faultsByKind)
        .map(([k, v]) => `${k} ${v}`)
        .join(
          ', ',
        )}) · lost ${report.lostMessages + report.lostAnswers + report.unacknowledged} · ` +
      `duplicated ${report.duplicatedMessages + report.duplicatedRuns + report.duplicatedAnswers + report.streamDuplicates} · ` +
      `stuck ${report.stuckRuns + report.stuckStreams} · gaps ${report.streamGaps} · wrong text ${report.wrongText} · ` +
      `two nodes at once ${report.executedTwice} · refused after ${report.refusedAfter} · ` +
      `${(report.durationMs / 1000).toFixed(0)} s`,
    metrics: {
      turns: report.turns,
      completed: report.completed,
      failed,
      faults: report.faultsInjected,
      reconnects: report.reconnects,
      ...bad,
      durationMs: report.durationMs,
    },
    ...(total > 0
      ? {
          failure: `${nonZero.map(([k, v]) => `${k} ${v}`).join(', ')} (the goal is 0 in every column; see notes)`,
        }
      : {}),
  };
}

export const chaosBenchmark: Benchmark = {
  id: 16,
  name: 'chaos',
  // Minutes of faults on three nodes: run with --only chaos, not in every full run.
  standalone: true,
  title:
    'Chaos run: three nodes under overlapping faults (kill -9, SIGTERM, Redis and PostgreSQL restarts)',
  measuredAs:
    'three built server processes (lease 2 s) behind HAProxy on a PostgreSQL server and a Redis of the run alone, the fake model (a `write_file` tool call, then a streamed 14-word answer); 12 sessions send turns one after the other (idempotency key per turn, resent until acknowledged, streams followed to their terminal event, reconnecting with `Last-Event-ID` through HAProxy); seeded faults over 150 s: kill -9 and SIGTERM of a node (started again after 0.3–2 s), Redis restart, PostgreSQL restart (`pg_ctl -m immediate`), overlapping. Then: stored messages, answers and runs per turn, the model calls per run and node process, one more turn per session',
  comparedWith: '—',
  goal: '0 lost, 0 duplicated, 0 stuck, 0 gaps, no run executed by two nodes at once, sessions take new messages (≥ 1,000 turns, ≥ 20 faults)',
  async run(ctx) {
    await ensureServerBuilt(ctx.repoRoot);
    const resources: Resources = { nodes: [] };
    try {
      const report = await runOnce(ctx, resources);
      const failed = Object.entries(report.failed).map(([code, n]) => `${code} ×${n}`);
      return {
        rows: [rowOf(report)],
        notes: [
          `Seed ${report.seed} (COGNITION_CHAOS_SEED replays the fault schedule; the load's timing is the machine's). Turns ending in an \`error\` event: ${failed.length ? failed.join(', ') : 'none'}. Client reconnections ${report.reconnects}; answers other than 200 met by sends and reconnections: ${JSON.stringify(report.refusals)}.`,
          `Faults: ${report.faults
            .map(
              (f) =>
                `${f.kind} ${f.target ?? '(skipped)'} at ${(f.at / 1000).toFixed(1)} s for ${(f.downMs / 1000).toFixed(1)} s${f.delayedMs !== undefined ? ` (waited ${(f.delayedMs / 1000).toFixed(1)} s for a second node)` : ''}${f.downAt !== null ? `, down at ${(f.downAt / 1000).toFixed(1)} s` : ''}${f.backAt !== null ? `, back at ${(f.backAt / 1000).toFixed(1)} s` : ''}${f.error ? ` (${f.error.slice(0, 120)})` : ''}`,
            )
            .join('; ')}.`,
          ...report.problems.slice(0, 40),
        ],
      };
    } finally {
      resources.balancer?.stop();
      await Promise.all(resources.nodes.map((node) => node?.stop() ?? Promise.resolve()));
      await resources.model?.close();
      await resources.redis?.stop();
      resources.database?.remove();
    }
  },
};
