// `npm run bench -- ab-turn --builds before=<dir>/main.js,after=dist/apps/server/main.js
//   [--providers sqlite,postgresql,memory] [--turns 40] [--warmup 10] [--profile <dir>]
//   [--round-trips] [--cluster]`
//
// Server CPU per turn of several server builds, taking turns: benchmark 1's turn (one `ls` call,
// then 50 tokens, a fresh session each) on every build × backend, each server on its own fresh
// database, the servers rotating turn by turn so load from other work on the machine hits all
// of them alike. CPU time (user + system, /proc) over the measured turns, not wall time, is the
// figure: it hardly depends on that load. What an optimisation's commit message quotes.
// `--round-trips` also counts each PostgreSQL server's statements per measured turn (a preload
// wrapping node-postgres, support/pg-round-trips.cjs; the scheduler off so its polls do not
// count): deterministic, unlike the times, which that run should not be quoted for.
// `--cluster` runs each server as a cluster node (the provisioned Redis, a key prefix of its
// own): its turns then claim their runs and write under the claim (run fencing), which a single
// node does not. With `--round-trips` too, each node's Redis commands are counted as well
// (support/redis-commands.cjs).
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { createCognitionClient } from '@cognition/client';
import type { CognitionClient } from '@cognition/client';
import { FakeOpenAIServer } from '@cognition/runtime/testing/http';
import { createTestDatabase } from '@cognition/storage-prisma/testing';
import { summarizeLatencies } from './harness/stats';
import type { AgentServerProvider } from './support/agent-server';
import {
  fakeProviderEnv,
  streamTurn,
  toolThenAnswer,
  TURN_ANSWER_TOKENS,
  TURN_PROMPT,
  turnProblem,
} from './support/agent-server';
import { processCpuMs } from './support/process-cpu';
import { findRepoRoot } from './support/repo';
import type { BenchServer } from './support/server-process';
import { serverEnvFor, startServer } from './support/server-process';

const repoRoot = (): string => findRepoRoot(__dirname);

interface Contender {
  label: string;
  server: BenchServer;
  client: CognitionClient;
  sessions: string[];
  cpuAtStart: number;
  latencies: number[];
  /** Where the preload writes the statement counts (`--round-trips`, PostgreSQL only). */
  roundTripsFile: string | undefined;
  /** Where the Redis preload writes the command counts (`--round-trips --cluster`). */
  redisCommandsFile: string | undefined;
  cleanup: () => Promise<void>;
}

/**
 * The settings that preload the round-trip counter into a server writing to `file`, and the
 * Redis command counter writing to `redisFile` when there is one.
 */
function roundTripEnv(file: string, redisFile: string | undefined): Record<string, string> {
  const preload = (name: string) =>
    `--require ${path.join(repoRoot(), 'tools/bench/src/support', name)}`;
  return {
    NODE_OPTIONS: [
      preload('pg-round-trips.cjs'),
      ...(redisFile ? [preload('redis-commands.cjs')] : []),
    ].join(' '),
    COGNITION_BENCH_ROUND_TRIPS_FILE: file,
    ...(redisFile ? { COGNITION_BENCH_REDIS_COMMANDS_FILE: redisFile } : {}),
    COGNITION_SCHEDULES_ENABLED: 'false',
  };
}

/** The counts in `file` of `c`'s measured turns as lines: the total per turn, then each one. */
async function countReport(
  c: Contender,
  file: string | undefined,
  what: string,
  turns: number,
): Promise<string> {
  if (file === undefined) return '';
  const counts = JSON.parse(await readFile(file, 'utf8')) as Record<string, number>;
  const rows = Object.entries(counts).sort((a, b) => b[1] - a[1]);
  const total = rows.reduce((sum, [, n]) => sum + n, 0);
  const lines = rows.map(([label, n]) => `  ${(n / turns).toFixed(1).padStart(5)}  ${label}`);
  return `${c.label} ${what} per turn ${(total / turns).toFixed(1)}\n${lines.join('\n')}\n`;
}

function option(name: string, fallback: string): string {
  const index = process.argv.indexOf(`--${name}`);
  return index >= 0 ? (process.argv[index + 1] ?? fallback) : fallback;
}

function pidOf(server: BenchServer): number {
  const pid = server.child.pid;
  if (pid === undefined) throw new Error('a server process has no pid');
  return pid;
}

async function start(
  label: string,
  mainPath: string,
  provider: AgentServerProvider,
  fake: FakeOpenAIServer,
  sessions: number,
  profileDir: string | undefined,
  roundTrips: boolean,
): Promise<Contender> {
  const workspace = await mkdtemp(path.join(tmpdir(), 'cognition-ab-'));
  const roundTripsFile =
    roundTrips && provider === 'postgresql'
      ? path.join(
          tmpdir(),
          `cognition-ab-round-trips-${process.pid}-${label.replace('/', '-')}.json`,
        )
      : undefined;
  const redisCommandsFile =
    roundTripsFile && process.argv.includes('--cluster')
      ? roundTripsFile.replace(/\.json$/, '-redis.json')
      : undefined;
  const db = provider === 'memory' ? undefined : await createTestDatabase(provider);
  const cleanup = async (server?: BenchServer): Promise<void> => {
    await server?.stop();
    await db?.cleanup();
    await rm(workspace, { recursive: true, force: true });
  };
  let server: BenchServer | undefined;
  try {
    const storageEnv = db
      ? serverEnvFor(db, workspace)
      : { COGNITION_WORKSPACE_ROOT: workspace, COGNITION_PERSISTENCE_BACKEND: 'memory' };
    server = await startServer({
      repoRoot: repoRoot(),
      mainPath: path.resolve(mainPath),
      env: {
        ...storageEnv,
        ...fakeProviderEnv(fake),
        ...(roundTripsFile ? roundTripEnv(roundTripsFile, redisCommandsFile) : {}),
        ...(process.argv.includes('--cluster')
          ? {
              COGNITION_REDIS_URL:
                process.env['COGNITION_TEST_REDIS_URL'] ?? 'redis://127.0.0.1:6379',
              COGNITION_REDIS_KEY_PREFIX: `cognition-ab-${process.pid}-${label.replace('/', '-')}:`,
              COGNITION_NODE_ID: label.replace('/', '-'),
            }
          : {}),
      },
      profileDir: profileDir && path.resolve(profileDir, label.replace('/', '-')),
    });
    const client = createCognitionClient({ url: `${server.url}/trpc` });
    const ids: string[] = [];
    for (let i = 0; i < sessions; i += 1) {
      ids.push((await client.sessions.create.mutate({ title: `turn ${i}` })).id);
    }
    const started = server;
    return {
      label,
      server,
      client,
      sessions: ids,
      cpuAtStart: 0,
      latencies: [],
      roundTripsFile,
      redisCommandsFile,
      cleanup: () => cleanup(started),
    };
  } catch (error) {
    await cleanup(server);
    throw error;
  }
}

async function main(): Promise<void> {
  const builds = option('builds', `current=${path.join(repoRoot(), 'dist/apps/server/main.js')}`)
    .split(',')
    .map((entry) => entry.split('=') as [string, string]);
  const providers = option('providers', 'sqlite,postgresql,memory').split(
    ',',
  ) as AgentServerProvider[];
  const turns = Number(option('turns', '40'));
  const warmup = Number(option('warmup', '10'));
  const profileDir = process.argv.includes('--profile') ? option('profile', 'tmp/prof') : undefined;
  const roundTrips = process.argv.includes('--round-trips');
  const fake = await FakeOpenAIServer.start({ fallback: toolThenAnswer(TURN_ANSWER_TOKENS) });
  const contenders: Contender[] = [];
  try {
    for (const provider of providers) {
      for (const [name, mainPath] of builds) {
        const label = `${name}/${provider}`;
        contenders.push(
          await start(label, mainPath, provider, fake, warmup + turns, profileDir, roundTrips),
        );
      }
    }
    for (let i = 0; i < warmup + turns; i += 1) {
      if (i === warmup) {
        for (const c of contenders) {
          c.cpuAtStart = processCpuMs(pidOf(c.server));
          // The counter's first signal starts the count, its second (below) stops it.
          if (c.roundTripsFile) process.kill(pidOf(c.server), 'SIGUSR2');
        }
      }
      // Rotating order: no server always goes first after the fake model's idle time.
      for (let k = 0; k < contenders.length; k += 1) {
        const c = contenders[(k + i) % contenders.length] as Contender;
        const started = performance.now();
        const shape = await streamTurn(c.client, c.sessions[i] as string, TURN_PROMPT);
        const problem = turnProblem(shape, TURN_ANSWER_TOKENS);
        if (problem !== null) throw new Error(`${c.label}: ${problem}`);
        if (i >= warmup) c.latencies.push(performance.now() - started);
      }
    }
    for (const c of contenders) {
      if (c.roundTripsFile) process.kill(pidOf(c.server), 'SIGUSR2');
      const cpu = (processCpuMs(pidOf(c.server)) - c.cpuAtStart) / turns;
      const { p50 } = summarizeLatencies(c.latencies);
      process.stdout.write(
        `${c.label.padEnd(28)} server CPU ${cpu.toFixed(1)} ms/turn · p50 ${p50.toFixed(1)} ms\n`,
      );
    }
  } finally {
    for (const c of contenders) await c.cleanup();
    await fake.close();
  }
  // The counts are written when a server exits, so they are read after the stops.
  for (const c of contenders) {
    for (const [file, what] of [
      [c.roundTripsFile, 'round trips'],
      [c.redisCommandsFile, 'Redis commands'],
    ] as const) {
      if (!file) continue;
      process.stdout.write(await countReport(c, file, what, turns));
      await rm(file, { force: true });
    }
  }
}

main().catch((error: unknown) => {
  process.stderr.write(
    `${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`,
  );
  process.exit(1);
});
