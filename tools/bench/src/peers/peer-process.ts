import { spawn } from 'node:child_process';
import type { ChildProcess } from 'node:child_process';
import { mkdtemp } from 'node:fs/promises';
import path from 'node:path';
import type { BenchContext } from '../harness/types';
import { BENCH_MODEL } from '../support/agent-server';
import { untilReady } from '../support/child-server';
import { peersDir } from './install';

const START_TIMEOUT_MS = 90_000;
const READY_POLL_MS = 20;
const STOP_TIMEOUT_MS = 10_000;

export interface PeerProcess {
  /** e.g. `http://127.0.0.1:41234` */
  url: string;
  pid: number;
  child: ChildProcess;
  /** SIGTERM, then SIGKILL when it has not exited within 10 s. Idempotent. */
  stop(): Promise<void>;
}

export interface PeerProcessOptions {
  /**
   * The script's file name in tools/bench/peers, the peers' package: its imports resolve from
   * that package's node_modules (ES modules resolve from the importing file and ignore NODE_PATH).
   */
  script: string;
  /** Names its temp directories under the benchmark's (working directory, agent workspace). */
  name: string;
  /** The fake OpenAI-compatible model every contender talks to. */
  modelUrl: string;
  /** The peer's own settings, besides the workspace and the model every peer gets. */
  env: Record<string, string>;
  /** A path answered 200 once the peer serves requests. */
  readyPath: string;
}

/**
 * Spawns a peer server script of tools/bench/peers in its own Node process (like our server, so a peer
 * never shares the client's event loop), in a fresh working directory (where a peer keeps files
 * of its own) with a fresh agent workspace and the bench's model (`BENCH_PEER_WORKSPACE`,
 * `BENCH_PEER_MODEL_URL`, `BENCH_PEER_MODEL`); waits for its `listening <url>` line, then polls
 * `readyPath` until it answers 200. Its log is discarded like our server's; stderr is kept for
 * failure reports. With `ctx.profileDir`, it writes a V8 CPU profile there when it exits.
 */
export async function startPeerProcess(
  ctx: BenchContext,
  options: PeerProcessOptions,
): Promise<PeerProcess> {
  const script = path.join(peersDir(ctx.repoRoot), options.script);
  const cwd = await mkdtemp(path.join(ctx.tmpDir, `${options.name}-`));
  const workspace = await mkdtemp(path.join(ctx.tmpDir, `${options.name}-workspace-`));
  const nodeArgs = ctx.profileDir ? ['--cpu-prof', `--cpu-prof-dir=${ctx.profileDir}`] : [];
  const child = spawn(process.execPath, [...nodeArgs, script], {
    cwd,
    env: {
      PATH: process.env['PATH'] ?? '/usr/bin:/bin',
      NODE_ENV: 'production',
      BENCH_PEER_WORKSPACE: workspace,
      BENCH_PEER_MODEL_URL: options.modelUrl,
      BENCH_PEER_MODEL: BENCH_MODEL,
      ...options.env,
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stdout = '';
  let url: string | undefined;
  child.stdout.on('data', (chunk: Buffer) => {
    if (url !== undefined) return;
    stdout = (stdout + chunk.toString('utf8')).slice(-8_000);
    url = /^listening (http:\/\/\S+)$/m.exec(stdout)?.[1];
  });
  const { stop } = await untilReady(child, {
    what: options.script,
    readyUrl: () => (url === undefined ? undefined : `${url}${options.readyPath}`),
    pollMs: READY_POLL_MS,
    timeoutMs: START_TIMEOUT_MS,
    stopTimeoutMs: STOP_TIMEOUT_MS,
  });
  if (child.pid === undefined || url === undefined) {
    await stop();
    throw new Error(`${options.script} has no pid`);
  }
  return { url, pid: child.pid, child, stop };
}
