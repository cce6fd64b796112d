import { execFile, spawn } from 'node:child_process';
import type { ChildProcess } from 'node:child_process';
import { existsSync } from 'node:fs';
import net from 'node:net';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { promisify } from 'node:util';
import { untilReady } from './child-server';

const execFileAsync = promisify(execFile);

/** How often `/ready` is polled while a server starts. */
const READY_POLL_MS = 5;
const READY_TIMEOUT_MS = 60_000;
const STOP_TIMEOUT_MS = 20_000;

function serverMainPath(repoRoot: string): string {
  return path.join(repoRoot, 'dist/apps/server/main.js');
}

/** Builds dist/apps/server unless it is current (apps/server/build.mjs --if-needed). */
export async function ensureServerBuilt(repoRoot: string): Promise<void> {
  await execFileAsync(process.execPath, ['apps/server/build.mjs', '--if-needed'], {
    cwd: repoRoot,
  });
  if (!existsSync(serverMainPath(repoRoot))) {
    throw new Error(`the server build did not produce ${serverMainPath(repoRoot)}`);
  }
}

/** A TCP port nobody listens on right now (the kernel's pick, released again). */
export async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = net.createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      server.close(() => {
        if (address && typeof address === 'object') resolve(address.port);
        else reject(new Error('no port assigned'));
      });
    });
  });
}

/** The last lines of one server's log, kept while a `ServerLogTails` collects. */
interface LogTail {
  label: string;
  lines: string[];
  partial: string;
}

/** Lines kept per server: enough for the requests and errors around a failure. */
const TAIL_LINES = 200;
let collecting: LogTail[] | null = null;

/**
 * Keeps the last lines of the log of every server started from now on until `stop()`, for a
 * failure report (the smoke run in the test suite prints them for a benchmark that failed).
 * Outside such a window a server's log is discarded (see `startServer`).
 */
export function collectServerLogs(): { report(): string[]; stop(): void } {
  const tails: LogTail[] = [];
  collecting = tails;
  return {
    report: () =>
      tails.flatMap((tail) => [
        `--- log of ${tail.label} (last ${TAIL_LINES} lines) ---`,
        ...tail.lines,
        ...(tail.partial ? [tail.partial] : []),
      ]),
    stop: () => {
      if (collecting === tails) collecting = null;
    },
  };
}

function keepTail(child: ChildProcess, tails: LogTail[], label: string): void {
  const tail: LogTail = { label, lines: [], partial: '' };
  tails.push(tail);
  const take = (chunk: Buffer) => {
    const text = tail.partial + chunk.toString('utf8');
    const lines = text.split('\n');
    tail.partial = lines.pop() ?? '';
    tail.lines.push(...lines);
    if (tail.lines.length > TAIL_LINES) tail.lines.splice(0, tail.lines.length - TAIL_LINES);
  };
  child.stdout?.on('data', take);
  child.stderr?.on('data', take);
}

export interface BenchServer {
  /** e.g. `http://127.0.0.1:41234` */
  url: string;
  /** ms from `spawn` to the first `GET /ready` answered 200. */
  readyMs: number;
  child: ChildProcess;
  /** SIGTERM, then SIGKILL when it has not exited within 20 s. Idempotent. */
  stop(): Promise<void>;
}

export interface StartServerOptions {
  repoRoot: string;
  /** The server bundle to run; default the repository's build, dist/apps/server/main.js. */
  mainPath?: string;
  /** COGNITION_* settings (host and port are chosen here). */
  env: Record<string, string>;
  /** When set, the server writes a V8 CPU profile there when it exits. */
  profileDir?: string | undefined;
  /** Headers of the `/ready` polls: a key when COGNITION_API_KEYS is set. */
  readyHeaders?: Record<string, string>;
  /** The port to listen on (default: a free one); a node behind a balancer keeps its port. */
  port?: number;
  /** More Node flags for the server process (e.g. `heapProbe`). */
  nodeArgs?: readonly string[];
}

/**
 * Spawns the built server (`node dist/apps/server/main.js`) on a free port and polls `/ready`
 * until it answers 200. Its log (stdout) is discarded, as a log shipper would take it off the
 * process without the benchmark paying for parsing, unless `collectServerLogs` keeps its tail;
 * stderr is kept for failure reports.
 */
export async function startServer(options: StartServerOptions): Promise<BenchServer> {
  const port = options.port ?? (await freePort());
  const url = `http://127.0.0.1:${port}`;
  const nodeArgs = [
    ...(options.profileDir ? ['--cpu-prof', `--cpu-prof-dir=${options.profileDir}`] : []),
    ...(options.nodeArgs ?? []),
  ];
  const started = performance.now();
  const main = options.mainPath ?? serverMainPath(options.repoRoot);
  const child = spawn(process.execPath, [...nodeArgs, main], {
    cwd: options.repoRoot,
    env: {
      PATH: process.env['PATH'] ?? '/usr/bin:/bin',
      COGNITION_HOST: '127.0.0.1',
      COGNITION_PORT: String(port),
      ...options.env,
    },
    stdio: ['ignore', collecting ? 'pipe' : 'ignore', 'pipe'],
  });
  if (collecting)
    keepTail(child, collecting, `the server on port ${port} (pid ${child.pid ?? '?'})`);
  const { stop } = await untilReady(child, {
    what: 'the server',
    readyUrl: () => `${url}/ready`,
    ...(options.readyHeaders ? { readyHeaders: options.readyHeaders } : {}),
    pollMs: READY_POLL_MS,
    timeoutMs: READY_TIMEOUT_MS,
    stopTimeoutMs: STOP_TIMEOUT_MS,
  });
  return { url, readyMs: performance.now() - started, child, stop };
}

/** The server's settings for a database made by `createTestDatabase` of storage-prisma. */
export function serverEnvFor(
  db: { provider: 'sqlite'; path: string } | { provider: 'postgresql'; url: string },
  workspaceRoot: string,
): Record<string, string> {
  const base = { COGNITION_WORKSPACE_ROOT: workspaceRoot };
  switch (db.provider) {
    case 'sqlite':
      return {
        ...base,
        COGNITION_PERSISTENCE_BACKEND: 'sqlite',
        COGNITION_PERSISTENCE_URI: db.path,
      };
    case 'postgresql':
      return {
        ...base,
        COGNITION_PERSISTENCE_BACKEND: 'postgres',
        COGNITION_PERSISTENCE_URI: db.url,
      };
  }
}
