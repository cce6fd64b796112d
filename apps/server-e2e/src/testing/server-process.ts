import { spawn } from 'node:child_process';
import type { ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { SERVER_MAIN } from './paths';
import { trackOutput } from './process-logs';

export interface ServerProcess {
  /** e.g. `http://127.0.0.1:41234` */
  url: string;
  child: ChildProcess;
  /** Every stdout line so far (JSON log lines). */
  stdout: string[];
  stderr: string[];
  /** Sends `signal` (default SIGTERM) and resolves with the exit code. */
  stop(signal?: NodeJS.Signals): Promise<number | null>;
  /** Resolves with the exit code once the process exits (without signalling it). */
  exited: Promise<number | null>;
}

/** A temp workspace directory, removed by the returned function. */
export function tempWorkspace(prefix = 'cognition-e2e-'): { dir: string; remove(): void } {
  const dir = mkdtempSync(path.join(os.tmpdir(), prefix));
  return { dir, remove: () => rmSync(dir, { recursive: true, force: true }) };
}

/**
 * Spawns the built server on a free port (COGNITION_PORT=0; the port is read from the startup
 * log line) with only the given COGNITION_* settings, and waits until it listens. Its output is
 * tracked (process-logs.ts): a failing test prints it.
 */
export async function startServerProcess(env: Record<string, string>): Promise<ServerProcess> {
  // A server given no workspace would keep its state (its development secrets key) in the
  // spawning process's directory, the checkout: it gets one of its own, removed when it exits.
  const ownWorkspace =
    env['COGNITION_WORKSPACE_ROOT'] === undefined
      ? mkdtempSync(path.join(os.tmpdir(), 'cognition-e2e-server-'))
      : undefined;
  const child = spawn(process.execPath, [SERVER_MAIN], {
    env: {
      PATH: process.env['PATH'] ?? '',
      COGNITION_HOST: '127.0.0.1',
      COGNITION_PORT: '0',
      COGNITION_LOG_LEVEL: 'info',
      ...(ownWorkspace ? { COGNITION_WORKSPACE_ROOT: ownWorkspace } : {}),
      ...env,
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  if (ownWorkspace) {
    child.once('exit', () => rmSync(ownWorkspace, { recursive: true, force: true }));
  }
  const stdout: string[] = [];
  const stderr: string[] = [];
  // Printed when a test fails (process-logs.ts); a node's id names it in a cluster.
  const node = env['COGNITION_NODE_ID'];
  trackOutput(
    `server ${node ? `${node} ` : ''}(pid ${child.pid ?? '?'})`,
    { stdout, stderr },
    child,
  );
  const exited = new Promise<number | null>((resolve) =>
    child.once('exit', (code) => resolve(code)),
  );

  const url = await new Promise<string>((resolve, reject) => {
    let buffered = '';
    // One that does not listen in time is killed: a caller that starts another must not leave
    // it behind (the chaos run restarts nodes while the database is down). 60 s: three nodes
    // starting at once beside other work took over 30 s on a starved 2-core machine.
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`server did not start:\n${stderr.join('')}${stdout.join('\n')}`));
    }, 60_000);
    child.stdout?.on('data', (chunk: Buffer) => {
      buffered += chunk.toString('utf8');
      let newline = buffered.indexOf('\n');
      while (newline !== -1) {
        const line = buffered.slice(0, newline);
        buffered = buffered.slice(newline + 1);
        stdout.push(line);
        try {
          const parsed = JSON.parse(line) as { url?: string };
          if (typeof parsed.url === 'string') {
            clearTimeout(timer);
            resolve(parsed.url);
          }
        } catch {
          // not a JSON line; kept in stdout for diagnostics
        }
        newline = buffered.indexOf('\n');
      }
    });
    child.stderr?.on('data', (chunk: Buffer) => stderr.push(chunk.toString('utf8')));
    void exited.then((code) => {
      clearTimeout(timer);
      reject(
        new Error(
          `server exited with ${String(code)} before listening:\n${stderr.join('')}${stdout.join('\n')}`,
        ),
      );
    });
  });

  return {
    url,
    child,
    stdout,
    stderr,
    exited,
    async stop(signal: NodeJS.Signals = 'SIGTERM') {
      if (child.exitCode === null && child.signalCode === null) child.kill(signal);
      return exited;
    },
  };
}
