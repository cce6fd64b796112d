import { spawn } from 'node:child_process';
import type { ChildProcess } from 'node:child_process';
import { createConnection } from 'node:net';

/**
 * A `redis-server` of one test alone on its own port (nothing kept on disk), so that stopping it
 * (an outage, a restart in the chaos run) disturbs no other test. Needs the `redis-server`
 * binary that tools/provision installs.
 */
export interface PrivateRedis {
  url: string;
  /** What the current process wrote (kept across restarts), for a failing test's report. */
  output: { stdout: string[]; stderr: string[] };
  /** The running process (a new one after each `start`). */
  child: ChildProcess | null;
  /** SIGKILL (a crash: clients see their connections reset); resolves once it exited. */
  stop(): Promise<void>;
  /** Starts it again on the same port; resolves once it accepts connections. */
  start(): Promise<void>;
}

function accepts(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = createConnection({ port, host: '127.0.0.1' });
    socket.once('connect', () => {
      socket.destroy();
      resolve(true);
    });
    socket.once('error', () => resolve(false));
  });
}

export async function startPrivateRedis(
  port: number,
  onStart?: (child: ChildProcess, output: PrivateRedis['output']) => void,
): Promise<PrivateRedis> {
  const output = { stdout: [] as string[], stderr: [] as string[] };
  const redis: PrivateRedis = {
    url: `redis://127.0.0.1:${port}`,
    output,
    child: null,
    async stop() {
      const child = redis.child;
      redis.child = null;
      if (!child || child.exitCode !== null || child.signalCode !== null) return;
      const exited = new Promise((resolve) => child.once('exit', resolve));
      child.kill('SIGKILL');
      await exited;
    },
    async start() {
      const child = spawn(
        'redis-server',
        ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no'],
        { stdio: ['ignore', 'pipe', 'pipe'] },
      );
      let failed: Error | undefined;
      child.once('error', (error) => {
        failed = error;
      });
      child.stdout?.on('data', (chunk: Buffer) =>
        output.stdout.push(chunk.toString('utf8').trimEnd()),
      );
      child.stderr?.on('data', (chunk: Buffer) => output.stderr.push(chunk.toString('utf8')));
      redis.child = child;
      onStart?.(child, output);
      for (let i = 0; i < 200; i += 1) {
        if (failed)
          throw new Error(`redis-server did not start: ${failed.message} (is it installed?)`);
        if (await accepts(port)) return;
        await new Promise((resolve) => setTimeout(resolve, 25));
      }
      throw new Error(`redis-server did not listen on ${port}: ${output.stderr.join('')}`);
    },
  };
  await redis.start();
  return redis;
}
