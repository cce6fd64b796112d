import { spawn } from 'node:child_process';
import path from 'node:path';

const START_TIMEOUT_MS = 15_000;

export interface SseFloor {
  /** e.g. `http://127.0.0.1:41234/`: any method and path answers with the token stream. */
  url: string;
  pid: number;
  /** SIGTERM, then waits for the exit. Idempotent. */
  stop(): Promise<void>;
}

/**
 * Starts the SSE floor of benchmark 2 (`sse-floor-server.mjs`) in its own Node process, where
 * every request is answered with `tokens` token events (token i is `words[i % words.length]`)
 * and a `done` event; or benchmark 4's, where a request gets one event and then heartbeats. A child process rather than a server in the bench process: the server
 * measured against it is a separate process too, so in both cases the client and the server do
 * not share one event loop, and the ratio compares only the servers' per-event work.
 */
export async function startSseFloor(
  repoRoot: string,
  options: (
    | { tokens: number; words: readonly string[] }
    /** Benchmark 4: one `status` event per request, then heartbeats every `idleHeartbeatMs`. */
    | { idleHeartbeatMs: number }
  ) & {
    profileDir?: string | undefined;
    /** More Node flags and environment for the floor's process (e.g. `heapProbe`). */
    nodeArgs?: readonly string[];
    env?: Record<string, string>;
  },
): Promise<SseFloor> {
  const script = path.join(repoRoot, 'tools/bench/src/support/sse-floor-server.mjs');
  const nodeArgs = [
    ...(options.profileDir ? ['--cpu-prof', `--cpu-prof-dir=${options.profileDir}`] : []),
    ...(options.nodeArgs ?? []),
  ];
  const child = spawn(process.execPath, [...nodeArgs, script], {
    env: {
      PATH: process.env['PATH'] ?? '/usr/bin:/bin',
      ...options.env,
      ...('idleHeartbeatMs' in options
        ? { SSE_FLOOR_IDLE_HEARTBEAT_MS: String(options.idleHeartbeatMs) }
        : {
            SSE_FLOOR_TOKENS: String(options.tokens),
            SSE_FLOOR_WORDS: JSON.stringify(options.words),
          }),
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stderr = '';
  child.stderr.on('data', (chunk: Buffer) => {
    stderr = (stderr + chunk.toString('utf8')).slice(-8_000);
  });
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  const stop = async (): Promise<void> => {
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGTERM');
    await exited;
  };
  try {
    const port = await new Promise<number>((resolve, reject) => {
      let stdout = '';
      const timer = setTimeout(
        () => reject(new Error(`the SSE floor did not start within ${START_TIMEOUT_MS} ms`)),
        START_TIMEOUT_MS,
      );
      child.stdout.on('data', (chunk: Buffer) => {
        stdout += chunk.toString('utf8');
        const match = /^listening (\d+)$/m.exec(stdout);
        if (match?.[1]) {
          clearTimeout(timer);
          resolve(Number(match[1]));
        }
      });
      child.once('exit', (code) => {
        clearTimeout(timer);
        reject(new Error(`the SSE floor exited with ${String(code)}:\n${stderr}`));
      });
    });
    if (child.pid === undefined) throw new Error('the SSE floor has no pid');
    return { url: `http://127.0.0.1:${port}/`, pid: child.pid, stop };
  } catch (error) {
    await stop();
    throw error;
  }
}
