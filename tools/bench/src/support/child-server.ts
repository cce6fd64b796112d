import type { ChildProcess } from 'node:child_process';
import { performance } from 'node:perf_hooks';
import { setTimeout as sleep } from 'node:timers/promises';

/** A spawned server process that answered ready. */
export interface WatchedChild {
  /** SIGTERM, then SIGKILL when it has not exited within `stopTimeoutMs`. Idempotent. */
  stop: () => Promise<void>;
}

export interface ReadyOptions {
  /** e.g. `the server`, `mastra-server.mjs`: how failures name it. */
  what: string;
  /** The URL answered 200 once it serves requests; undefined while not known yet. */
  readyUrl: () => string | undefined;
  /** Sent with each poll (an API key when the server requires one on `/ready`). */
  readyHeaders?: Record<string, string>;
  pollMs: number;
  timeoutMs: number;
  stopTimeoutMs: number;
}

/**
 * Watches `child` (stderr, exit) and polls `readyUrl` until it answers 200. What our server and
 * the peers share: a failure to start (exit, timeout) stops the process and throws with its
 * stderr.
 */
export async function untilReady(
  child: ChildProcess,
  options: ReadyOptions,
): Promise<WatchedChild> {
  const started = performance.now();
  let stderr = '';
  child.stderr?.on('data', (chunk: Buffer) => {
    stderr = (stderr + chunk.toString('utf8')).slice(-8_000);
  });
  let exitCode: number | null | undefined;
  const exited = new Promise<void>((resolve) => {
    child.once('exit', (code, signal) => {
      exitCode = code ?? (signal ? -1 : null);
      resolve();
    });
  });
  const watched: WatchedChild = {
    stop: async () => {
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGTERM');
      const timer = setTimeout(() => child.kill('SIGKILL'), options.stopTimeoutMs);
      await exited;
      clearTimeout(timer);
    },
  };
  try {
    for (;;) {
      if (exitCode !== undefined) {
        throw new Error(
          `${options.what} exited with ${String(exitCode)} before it was ready:\n${stderr}`,
        );
      }
      if (performance.now() - started > options.timeoutMs) {
        throw new Error(`${options.what} was not ready within ${options.timeoutMs} ms:\n${stderr}`);
      }
      const url = options.readyUrl();
      if (url !== undefined) {
        const status = await fetch(url, { headers: options.readyHeaders ?? {} }).then(
          async (response) => {
            await response.arrayBuffer();
            return response.status;
          },
          () => 0,
        );
        if (status === 200) return watched;
      }
      await sleep(options.pollMs);
    }
  } catch (error) {
    await watched.stop();
    throw error;
  }
}
