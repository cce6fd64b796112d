import { existsSync } from 'node:fs';
import path from 'node:path';
import { MAX_OUTPUT_BYTES } from '../port';
import { expectSandboxError } from './expect-sandbox-error';
import type { ConformanceSession, SessionPool } from './session-pool';

/** A POSIX-shell check that the process whose pid is in `pidFile` is dead (or a zombie). */
function processGoneCheck(pidFile: string): string {
  return `sh -c 'p=$(cat ${pidFile}); test ! -e /proc/$p || grep -q ") Z" /proc/$p/stat'`;
}

/**
 * `execute` of the conformance suite: output and exit codes, the output cap, timeouts and aborts
 * that kill the whole process tree, cwd and env confinement.
 */
export function executeConformance(pool: SessionPool): void {
  describe('execute', () => {
    // One session for every command test: with docker that is one container.
    let s: ConformanceSession;
    const secretName = 'COGNITION_CONFORMANCE_SERVER_SECRET';
    beforeAll(async () => {
      process.env[secretName] = 'must-not-leak';
      s = await pool.create('exec');
    });
    afterAll(() => {
      delete process.env[secretName];
    });

    test('runs a program and returns its output and exit code 0', async () => {
      const result = await s.backend.execute('echo hello world');
      expect(result).toEqual({
        output: 'hello world\n',
        exitCode: 0,
        truncated: false,
        timedOut: false,
      });
    });

    test('reports a non-zero exit code', async () => {
      const result = await s.backend.execute(`sh -c 'exit 3'`);
      expect(result.exitCode).toBe(3);
      expect(result.timedOut).toBe(false);
    });

    test('captures stdout and stderr', async () => {
      const result = await s.backend.execute(`sh -c 'echo to-out; echo to-err 1>&2; exit 1'`);
      expect(result.output).toContain('to-out');
      expect(result.output).toContain('to-err');
      expect(result.exitCode).toBe(1);
    });

    test('an unknown program exits 127', async () => {
      const result = await s.backend.execute('no-such-program-cognition-xyz --flag');
      expect(result.exitCode).toBe(127);
      expect(result.output).toMatch(/not found/);
    });

    test('an empty command is INVALID_COMMAND', async () => {
      await expectSandboxError(s.backend.execute('   '), 'INVALID_COMMAND');
    });

    test('output under the cap is complete and not truncated', async () => {
      const result = await s.backend.execute('head -c 5000 /dev/zero');
      expect(result.output).toHaveLength(5000);
      expect(result.truncated).toBe(false);
    });

    test('output is capped at 100 KB and flagged truncated', async () => {
      const result = await s.backend.execute('head -c 300000 /dev/zero');
      expect(result.truncated).toBe(true);
      expect(Buffer.byteLength(result.output)).toBe(MAX_OUTPUT_BYTES);
      expect(result.exitCode).toBe(0);
    });

    test('a command running past its timeout is killed and flagged timedOut', async () => {
      const started = Date.now();
      const result = await s.backend.execute('sleep 30', { timeoutMs: 1000 });
      const elapsed = Date.now() - started;
      expect(result.timedOut).toBe(true);
      expect(result.exitCode).not.toBe(0);
      expect(elapsed).toBeGreaterThanOrEqual(900);
      expect(elapsed).toBeLessThan(8000);
    });

    test('a timeout kills the whole tree, including a child that ignores SIGTERM', async () => {
      await s.backend.write('tree/.keep', '');
      const started = Date.now();
      const result = await s.backend.execute(
        `sh -c 'sh -c "trap \\"\\" TERM; echo \\$\\$ > child.pid; exec sleep 30" & sleep 30'`,
        { cwd: 'tree', timeoutMs: 1000 },
      );
      expect(result.timedOut).toBe(true);
      expect(Date.now() - started).toBeLessThan(8000);
      expect((await s.backend.read('tree/child.pid')).trim()).toMatch(/^\d+$/);
      const check = await s.backend.execute(processGoneCheck('child.pid'), { cwd: 'tree' });
      expect(check.exitCode).toBe(0);
    });

    test('aborting the signal kills the command', async () => {
      const controller = new AbortController();
      const started = Date.now();
      setTimeout(() => controller.abort(), 300);
      const result = await s.backend.execute('sleep 30', {
        signal: controller.signal,
        timeoutMs: 20_000,
      });
      expect(result.timedOut).toBe(false);
      expect(result.exitCode).not.toBe(0);
      expect(Date.now() - started).toBeLessThan(8000);
    });

    test('an already aborted signal is refused before anything runs', async () => {
      await s.backend.write('aborted/.keep', '');
      await expectSandboxError(
        s.backend.execute('touch ran.txt', { cwd: 'aborted', signal: AbortSignal.abort() }),
        'ABORTED',
      );
      expect(existsSync(path.join(s.root, 'aborted', 'ran.txt'))).toBe(false);
    });

    test('cwd is resolved inside the root', async () => {
      await s.backend.write('cwd/sub/marker.txt', 'x');
      const listed = await s.backend.execute('ls', { cwd: 'cwd/sub' });
      expect(listed.output).toContain('marker.txt');
      const pwd = await s.backend.execute('pwd', { cwd: 'cwd/sub' });
      expect(pwd.output.trim()).toMatch(/\/cwd\/sub$/);
    });

    test('a cwd outside the root, missing, or not a directory is refused', async () => {
      await expectSandboxError(s.backend.execute('ls', { cwd: '..' }), 'PATH_VIOLATION');
      await expectSandboxError(s.backend.execute('ls', { cwd: '/etc' }), 'PATH_VIOLATION');
      await expectSandboxError(s.backend.execute('ls', { cwd: 'missing-dir' }), 'NOT_FOUND');
      await s.backend.write('cwd-file.txt', 'x');
      await expectSandboxError(s.backend.execute('ls', { cwd: 'cwd-file.txt' }), 'NOT_A_DIRECTORY');
    });

    test('env: options.env is added, the server environment does not leak', async () => {
      const result = await s.backend.execute('env', {
        env: { COGNITION_CONFORMANCE_VAR: 'a b;c' },
      });
      expect(result.output).toContain('COGNITION_CONFORMANCE_VAR=a b;c');
      expect(result.output).toMatch(/^COGNITION_WORKSPACE=\//m);
      expect(result.output).toMatch(/^PATH=/m);
      expect(result.output).not.toContain('must-not-leak');
    });

    test('an invalid env name or timeout is INVALID_ARGUMENT', async () => {
      await expectSandboxError(
        s.backend.execute('env', { env: { 'BAD NAME': 'x' } }),
        'INVALID_ARGUMENT',
      );
      await expectSandboxError(s.backend.execute('env', { timeoutMs: -5 }), 'INVALID_ARGUMENT');
    });

    test('commands and file operations see the same files', async () => {
      await s.backend.write('shared/from-host.txt', 'from host\n');
      const cat = await s.backend.execute('cat shared/from-host.txt');
      expect(cat.output).toBe('from host\n');
      const append = await s.backend.execute(
        `sh -c 'echo appended >> shared/from-host.txt && echo made > shared/from-command.txt'`,
      );
      expect(append.exitCode).toBe(0);
      expect(await s.backend.read('shared/from-host.txt')).toBe('from host\nappended\n');
      expect(await s.backend.read('shared/from-command.txt')).toBe('made\n');
      await s.backend.edit('shared/from-command.txt', 'made', 'edited');
      expect((await s.backend.execute('cat shared/from-command.txt')).output).toBe('edited\n');
    });
  });
}
