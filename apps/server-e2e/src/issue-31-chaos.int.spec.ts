import { createServer } from 'node:net';
import type { AddressInfo } from 'node:net';
import type { ChaosCluster, ChaosReport } from '@cognition/api/testing';
import { ChaosModel, runChaos, violations } from '@cognition/api/testing';
import type { PrivateRedis } from '@cognition/cluster-redis/testing';
import { startPrivateRedis } from '@cognition/cluster-redis/testing';
import type { TestCluster } from './testing/cluster';
import { startCluster } from './testing/cluster';
import type { PrivatePostgres } from './testing/private-postgres';
import { startPrivatePostgres } from './testing/private-postgres';
import { trackOutput } from './testing/process-logs';

/**
 * Issue 31 item 1, the `npm test` size of the chaos run: three nodes behind HAProxy on a
 * PostgreSQL and a Redis of this spec alone (so restarting them disturbs no other test), clients
 * sending turns (a tool call, then a streamed answer) while seeded faults hit: kill -9 and
 * SIGTERM of nodes (started again after a pause), a Redis restart, a PostgreSQL restart. Then:
 * every acknowledged message stored once, every run terminal, every stream whole to its
 * terminal event, no run executed by two nodes at once, no answer stored twice, every session
 * taking a new message. ISSUE31_CHAOS_SEED replays a run (the seed is printed);
 * `npm run bench -- --only chaos` is the ≥ 1,000-turn, ≥ 20-fault version.
 */
const SEED = Number(process.env['ISSUE31_CHAOS_SEED'] ?? Math.floor(Math.random() * 2 ** 31));
/**
 * 10 s: a node renewing every 3.3 s keeps its runs on a machine busy with the rest of the suite;
 * a kill -9 is taken over within 10–15 s. A renewal late by more than the lease (2 s in the
 * bench; 5 s at load 30 here) lets a second node execute a run the first still executes — a
 * defect left open, which the bench shows (docs/benchmarks.md, benchmark 16).
 */
const LEASE_SECONDS = Number(process.env['ISSUE31_CHAOS_LEASE_SECONDS'] ?? 10);

async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  await new Promise((resolve) => server.close(resolve));
  return port;
}

function summary(report: ChaosReport): string {
  return [
    `seed ${report.seed} (replay: ISSUE31_CHAOS_SEED=${report.seed})`,
    `turns ${report.turns}, completed ${report.completed}, failed ${JSON.stringify(report.failed)}, faults ${report.faultsInjected} ${JSON.stringify(report.faultsByKind)}, reconnects ${report.reconnects}, refusals ${JSON.stringify(report.refusals)}`,
    `violations ${JSON.stringify(violations(report))}`,
    ...report.faults.map(
      (f) =>
        `fault ${f.kind} ${f.target ?? '-'} at ${f.at} ms, down ${f.downMs} ms, back ${f.backAt ?? '-'}${f.error ? ` (${f.error})` : ''}`,
    ),
    ...report.problems.slice(0, 60),
  ].join('\n');
}

describe('issue 31: the chaos run (three nodes, HAProxy, PostgreSQL and Redis restarts)', () => {
  let model: ChaosModel;
  let database: PrivatePostgres;
  let redis: PrivateRedis;
  let cluster: TestCluster;

  beforeAll(async () => {
    process.stderr.write(`issue-31 chaos: seed ${SEED} (replay: ISSUE31_CHAOS_SEED=${SEED})\n`);
    database = startPrivatePostgres(await freePort());
    const redisPort = await freePort();
    redis = await startPrivateRedis(redisPort, (child, output) =>
      trackOutput(`redis :${redisPort}`, output, child),
    );
    model = await ChaosModel.start({ answerWords: 12, chunkDelayMs: 10 });
    cluster = await startCluster({
      size: 3,
      fake: model.fake,
      leaseSeconds: LEASE_SECONDS,
      databaseUrl: database.url,
      redisUrl: redis.url,
      nodeEnv: (index) => model.nodeEnv(index),
    });
  }, 90_000);
  afterAll(async () => {
    await cluster?.close();
    await model?.close();
    await redis?.stop();
    database?.remove();
  });

  it('loses, repeats and strands nothing under overlapping faults', async () => {
    const target: ChaosCluster = {
      url: cluster.url,
      size: 3,
      stopNode: (index, signal) => cluster.stop(index, signal),
      startNode: (index) => cluster.start(index),
      stopRedis: () => redis.stop(),
      startRedis: () => redis.start(),
      stopPostgres: () => database.stop(),
      startPostgres: () => database.start(),
    };
    const report = await runChaos({
      cluster: target,
      model,
      seed: SEED,
      sessions: 6,
      turns: 60,
      faults: 6,
      faultWindowMs: 20_000,
      turnTimeoutMs: 60_000,
      log: (line) => void process.stderr.write(`chaos: ${line}\n`),
    });
    process.stderr.write(`issue-31 chaos:\n${summary(report)}\n`);
    const zeros = Object.fromEntries(Object.keys(violations(report)).map((key) => [key, 0]));
    expect({ seed: SEED, ...violations(report) }).toEqual({ seed: SEED, ...zeros });
    expect(report.turns).toBeGreaterThanOrEqual(60);
    expect(report.faultsInjected).toBeGreaterThanOrEqual(4);
  }, 180_000);
});
