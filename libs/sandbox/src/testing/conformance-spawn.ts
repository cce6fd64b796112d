import os from 'node:os';
import type { Readable } from 'node:stream';
import type { ExecutionBackend, SandboxProcess } from '../port';
import { expectSandboxError } from './expect-sandbox-error';
import type { SessionPool } from './session-pool';

/** Reads `stream` until `text` appeared, returning everything read. */
export function readStreamUntil(stream: Readable, text: string, ms = 10_000): Promise<string> {
  return new Promise((resolve, reject) => {
    let seen = '';
    const timer = setTimeout(() => {
      stream.off('data', onData);
      reject(new Error(`no "${text}" within ${ms} ms: ${seen}`));
    }, ms);
    const onData = (chunk: Buffer): void => {
      seen += chunk.toString('utf8');
      if (seen.includes(text)) {
        clearTimeout(timer);
        stream.off('data', onData);
        resolve(seen);
      }
    };
    stream.on('data', onData);
    stream.once('end', () => {
      clearTimeout(timer);
      reject(new Error(`stream ended before "${text}": ${seen}`));
    });
  });
}

async function spawnOn(
  backend: ExecutionBackend,
  program: string,
  args: string[],
  options?: { cwd?: string; env?: Record<string, string> },
): Promise<SandboxProcess> {
  if (!backend.spawn) throw new Error(`the ${backend.kind} backend does not spawn`);
  return backend.spawn(program, args, options);
}

/**
 * Long-running processes over stdio (what an MCP stdio server needs), on every backend: talks
 * both ways, sees the given environment and the workspace, ends with its stdin, is killed (its
 * whole tree) by `kill()` and by the session's end, and bad programs or directories are refused.
 */
export function spawnConformance(pool: SessionPool): void {
  describe('spawn (long-running processes over stdio)', () => {
    test('talks over stdin/stdout in the workspace with the given environment', async () => {
      const s = await pool.create('spawn');
      await s.backend.write('sub/marker.txt', 'here\n');
      const child = await spawnOn(
        s.backend,
        'sh',
        ['-c', 'echo "x=$X marker=$(cat marker.txt)"; echo oops >&2; cat'],
        { cwd: 'sub', env: { X: 'given' } },
      );
      expect(await readStreamUntil(child.stdout, '\n')).toBe('x=given marker=here\n');
      child.stdin.write('ping\n');
      expect(await readStreamUntil(child.stdout, 'ping')).toBe('ping\n');
      // A big message arrives whole (an MCP tool list can be large).
      const big = 'y'.repeat(200_000);
      child.stdin.write(`${big}\n`);
      expect((await readStreamUntil(child.stdout, `${big}\n`)).length).toBe(big.length + 1);
      // The end of its stdin ends `cat`, with its exit code.
      child.stdin.end();
      expect(await child.exited).toBe(0);
      expect(child.stderrTail()).toContain('oops');
    });

    test('kill() ends the process and what it started', async () => {
      const s = await pool.create('spawn');
      const child = await spawnOn(s.backend, 'sh', [
        '-c',
        'sleep 30 & echo $! > child.pid; echo started; wait',
      ]);
      await readStreamUntil(child.stdout, 'started');
      child.kill();
      expect(await child.exited).toBe(128 + os.constants.signals.SIGTERM);
      const check = await s.backend.execute(
        `sh -c 'p=$(cat child.pid); test ! -e /proc/$p || grep -q ") Z" /proc/$p/stat'`,
      );
      expect(check.exitCode).toBe(0);
    });

    test('terminating the session kills a spawned process; spawn is refused afterwards', async () => {
      const s = await pool.create('spawn');
      const child = await spawnOn(s.backend, 'sh', ['-c', 'echo started; sleep 30']);
      await readStreamUntil(child.stdout, 'started');
      await s.backend.terminate();
      expect(await child.exited).not.toBe(0);
      await expectSandboxError(spawnOn(s.backend, 'cat', []), 'TERMINATED');
    });

    test('a missing program, NUL, or a cwd outside the workspace is refused', async () => {
      const s = await pool.create('spawn');
      await expectSandboxError(
        spawnOn(s.backend, 'no-such-program-cognition-xyz', []),
        'INVALID_COMMAND',
      );
      await expectSandboxError(spawnOn(s.backend, 'cat', ['a\0b']), 'INVALID_COMMAND');
      await expectSandboxError(spawnOn(s.backend, 'cat', [], { cwd: '..' }), 'PATH_VIOLATION');
    });
  });
}
