import { randomUUID } from 'node:crypto';
import { existsSync, promises as fs } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { SandboxError } from '../errors';
import type { SandboxErrorCode } from '../errors';
import type { ExecutionBackend, ExecutionBackendFactory } from '../port';
import { MAX_OUTPUT_BYTES } from '../port';

/**
 * A temporary session: its own root under os.tmpdir() and, beside it, an `outside` directory
 * holding `secret.txt` (the target of escape attempts).
 */
export interface ConformanceSession {
  backend: ExecutionBackend;
  sessionId: string;
  root: string;
  outside: string;
}

/** Expects `promise` to reject with a SandboxError of `code`; returns the error. */
export async function expectSandboxError(
  promise: Promise<unknown>,
  code: SandboxErrorCode,
): Promise<SandboxError> {
  let caught: unknown;
  try {
    await promise;
  } catch (error) {
    caught = error;
  }
  if (!(caught instanceof SandboxError)) {
    throw new Error(
      `expected a SandboxError ${code}, got ${caught === undefined ? 'success' : describeValue(caught)}`,
    );
  }
  expect(caught.code).toBe(code);
  return caught;
}

function describeValue(value: unknown): string {
  return value instanceof Error ? `${value.name}: ${value.message}` : JSON.stringify(value);
}

/**
 * Creates sessions for a conformance run and removes them (and their directories) afterwards.
 */
export class SessionPool {
  private readonly sessions: ConformanceSession[] = [];
  private readonly dirs: string[] = [];

  constructor(private readonly factory: () => ExecutionBackendFactory) {}

  async create(prefix = 'conf'): Promise<ConformanceSession> {
    const base = await fs.mkdtemp(path.join(os.tmpdir(), 'cognition-sandbox-'));
    this.dirs.push(base);
    const root = path.join(base, 'workspace');
    const outside = path.join(base, 'outside');
    await fs.mkdir(root);
    await fs.mkdir(outside);
    await fs.writeFile(path.join(outside, 'secret.txt'), 'top secret\n');
    const sessionId = `${prefix}-${randomUUID().slice(0, 12)}`;
    const backend = await this.factory().forSession(sessionId, root);
    const session = { backend, sessionId, root, outside };
    this.sessions.push(session);
    return session;
  }

  async cleanup(): Promise<void> {
    const sessions = this.sessions.splice(0);
    await Promise.all(sessions.map((s) => this.factory().release(s.sessionId)));
    const dirs = this.dirs.splice(0);
    await Promise.all(dirs.map((dir) => fs.rm(dir, { recursive: true, force: true })));
  }
}

/** A POSIX-shell check that the process whose pid is in `pidFile` is dead (or a zombie). */
function processGoneCheck(pidFile: string): string {
  return `sh -c 'p=$(cat ${pidFile}); test ! -e /proc/$p || grep -q ") Z" /proc/$p/stat'`;
}

/**
 * The behaviour every `ExecutionBackendFactory` must show, including the attacks it must refuse.
 * The factory must use the default protected paths (`.cognition`) and should use a short
 * `killGraceMs` (≤ 1000) so the suite stays quick. `getFactory` is called lazily (inside tests),
 * so it may return a factory created in a `beforeAll`.
 */
export function runSandboxConformance(
  name: string,
  getFactory: () => ExecutionBackendFactory,
): void {
  describe(`${name} sandbox conformance`, () => {
    const pool = new SessionPool(getFactory);
    afterAll(() => pool.cleanup());

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
        await expectSandboxError(
          s.backend.execute('ls', { cwd: 'cwd-file.txt' }),
          'NOT_A_DIRECTORY',
        );
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

    describe('file operations', () => {
      let s: ConformanceSession;
      beforeEach(async () => {
        s = await pool.create('files');
      });

      test('write then read returns the exact content', async () => {
        const content = 'line one\nünïcødé ✓\n\ttabbed\n';
        await s.backend.write('notes.txt', content);
        expect(await s.backend.read('notes.txt')).toBe(content);
        expect(await fs.readFile(path.join(s.root, 'notes.txt'), 'utf8')).toBe(content);
      });

      test('write creates parent directories and overwrites', async () => {
        await s.backend.write('a/b/c/deep.txt', 'one');
        await s.backend.write('a/b/c/deep.txt', 'two');
        expect(await s.backend.read('a/b/c/deep.txt')).toBe('two');
      });

      test('read honours offset and limit (0-based lines)', async () => {
        await s.backend.write('lines.txt', 'l0\nl1\nl2\nl3\n');
        expect(await s.backend.read('lines.txt', { offset: 1, limit: 2 })).toBe('l1\nl2');
        expect(await s.backend.read('lines.txt', { offset: 3 })).toBe('l3');
        expect(await s.backend.read('lines.txt', { limit: 1 })).toBe('l0');
        expect(await s.backend.read('lines.txt', { offset: 10 })).toBe('');
        expect(await s.backend.read('lines.txt', { limit: 0 })).toBe('');
        await expectSandboxError(s.backend.read('lines.txt', { offset: -1 }), 'INVALID_ARGUMENT');
        await expectSandboxError(s.backend.read('lines.txt', { limit: 1.5 }), 'INVALID_ARGUMENT');
      });

      test('read and write refuse what is not a file', async () => {
        await expectSandboxError(s.backend.read('missing.txt'), 'NOT_FOUND');
        await s.backend.write('dir/file.txt', 'x');
        await expectSandboxError(s.backend.read('dir'), 'IS_A_DIRECTORY');
        await expectSandboxError(s.backend.write('dir', 'x'), 'IS_A_DIRECTORY');
        await expectSandboxError(s.backend.write('dir/file.txt/child', 'x'), 'NOT_A_DIRECTORY');
      });

      test('ls lists a directory with types and sizes, sorted', async () => {
        await s.backend.write('b.txt', '12345');
        await s.backend.write('a/inner.txt', 'x');
        await fs.symlink('b.txt', path.join(s.root, 'link'));
        expect(await s.backend.ls()).toEqual([
          { path: 'a', type: 'directory', size: expect.any(Number) as number },
          { path: 'b.txt', type: 'file', size: 5 },
          { path: 'link', type: 'symlink', size: expect.any(Number) as number },
        ]);
        expect(await s.backend.ls('a')).toEqual([{ path: 'a/inner.txt', type: 'file', size: 1 }]);
        expect(await s.backend.ls('b.txt')).toEqual([{ path: 'b.txt', type: 'file', size: 5 }]);
        await expectSandboxError(s.backend.ls('nope'), 'NOT_FOUND');
      });

      test('paths may be absolute when they are inside the root', async () => {
        await s.backend.write(path.join(s.backend.root, 'abs.txt'), 'absolute');
        expect(await s.backend.read('abs.txt')).toBe('absolute');
      });

      test('edit replaces text that occurs exactly once, literally', async () => {
        await s.backend.write('code.ts', 'const a = 1;\nconst b = 2;\n');
        await s.backend.edit('code.ts', 'const b = 2;', 'const b = "$&$1";');
        expect(await s.backend.read('code.ts')).toBe('const a = 1;\nconst b = "$&$1";\n');
      });

      test('edit with no match is EDIT_NO_MATCH saying 0 matches, file unchanged', async () => {
        await s.backend.write('code.ts', 'alpha\n');
        const error = await expectSandboxError(
          s.backend.edit('code.ts', 'beta', 'gamma'),
          'EDIT_NO_MATCH',
        );
        expect(error.message).toContain('0 matches');
        expect(await s.backend.read('code.ts')).toBe('alpha\n');
      });

      test('edit with several matches is EDIT_AMBIGUOUS saying how many', async () => {
        await s.backend.write('code.ts', 'x = 1\nx = 1\nx = 1\n');
        const error = await expectSandboxError(
          s.backend.edit('code.ts', 'x = 1', 'x = 2'),
          'EDIT_AMBIGUOUS',
        );
        expect(error.message).toContain('3 matches');
        expect(await s.backend.read('code.ts')).toBe('x = 1\nx = 1\nx = 1\n');
      });

      test('edit refuses a missing file and an empty oldText', async () => {
        await expectSandboxError(s.backend.edit('missing.ts', 'a', 'b'), 'NOT_FOUND');
        await s.backend.write('code.ts', 'a');
        await expectSandboxError(s.backend.edit('code.ts', '', 'b'), 'INVALID_ARGUMENT');
      });

      test('glob matches relative to the base path, returns root-relative sorted paths', async () => {
        await s.backend.write('src/b.ts', '');
        await s.backend.write('src/a.ts', '');
        await s.backend.write('src/nested/c.ts', '');
        await s.backend.write('src/readme.md', '');
        await s.backend.write('top.ts', '');
        await s.backend.write('.hidden/d.ts', '');
        expect(await s.backend.glob('**/*.ts')).toEqual([
          'src/a.ts',
          'src/b.ts',
          'src/nested/c.ts',
          'top.ts',
        ]);
        expect(await s.backend.glob('*.ts')).toEqual(['top.ts']);
        expect(await s.backend.glob('*.ts', 'src')).toEqual(['src/a.ts', 'src/b.ts']);
        expect(await s.backend.glob('**/*.md', 'src')).toEqual(['src/readme.md']);
        await expectSandboxError(s.backend.glob('*', 'missing'), 'NOT_FOUND');
        await expectSandboxError(s.backend.glob(''), 'INVALID_ARGUMENT');
      });

      test('grep finds a literal string with 1-based line numbers', async () => {
        await s.backend.write('src/a.ts', 'one\nneedle here\nthree\n');
        await s.backend.write('src/b.md', 'needle in markdown\n');
        await s.backend.write('other/c.ts', 'no match\nabc\n');
        await fs.writeFile(path.join(s.root, 'bin.dat'), Buffer.from([0, 1, 2, 110, 101, 101]));
        expect(await s.backend.grep('needle')).toEqual([
          { path: 'src/a.ts', line: 2, text: 'needle here' },
          { path: 'src/b.md', line: 1, text: 'needle in markdown' },
        ]);
        expect(await s.backend.grep('needle', { glob: '*.md' })).toEqual([
          { path: 'src/b.md', line: 1, text: 'needle in markdown' },
        ]);
        expect(await s.backend.grep('needle', { path: 'src/a.ts' })).toHaveLength(1);
        expect(await s.backend.grep('needle', { path: 'other' })).toEqual([]);
        expect(await s.backend.grep('needle', { maxMatches: 1 })).toHaveLength(1);
        // Literal, not a regular expression.
        expect(await s.backend.grep('a.c')).toEqual([]);
        expect(await s.backend.grep('abc')).toEqual([{ path: 'other/c.ts', line: 2, text: 'abc' }]);
      });

      test('delete removes a file or a whole directory', async () => {
        await s.backend.write('gone.txt', 'x');
        await s.backend.write('tree/a/b.txt', 'x');
        await s.backend.delete('gone.txt');
        await s.backend.delete('tree');
        expect(existsSync(path.join(s.root, 'gone.txt'))).toBe(false);
        expect(existsSync(path.join(s.root, 'tree'))).toBe(false);
        await expectSandboxError(s.backend.delete('gone.txt'), 'NOT_FOUND');
      });

      test('the workspace root itself cannot be deleted', async () => {
        await expectSandboxError(s.backend.delete('.'), 'PATH_VIOLATION');
        await expectSandboxError(s.backend.delete(''), 'PATH_VIOLATION');
        await expectSandboxError(s.backend.delete('sub/..'), 'PATH_VIOLATION');
        expect(existsSync(s.root)).toBe(true);
      });
    });

    describe('attacks', () => {
      let s: ConformanceSession;
      beforeEach(async () => {
        s = await pool.create('attack');
      });
      const secret = (): string => path.join(s.outside, 'secret.txt');

      test('../ traversal is refused by every operation', async () => {
        const target = '../outside/secret.txt';
        for (const attempt of [target, 'a/../../outside/secret.txt', './../outside/secret.txt']) {
          await expectSandboxError(s.backend.read(attempt), 'PATH_VIOLATION');
          await expectSandboxError(s.backend.write(attempt, 'pwned'), 'PATH_VIOLATION');
          await expectSandboxError(s.backend.edit(attempt, 'top', 'pwned'), 'PATH_VIOLATION');
          await expectSandboxError(s.backend.delete(attempt), 'PATH_VIOLATION');
          await expectSandboxError(s.backend.ls(attempt), 'PATH_VIOLATION');
        }
        await expectSandboxError(s.backend.write('../outside/new.txt', 'x'), 'PATH_VIOLATION');
        await expectSandboxError(s.backend.ls('..'), 'PATH_VIOLATION');
        await expectSandboxError(s.backend.glob('*', '..'), 'PATH_VIOLATION');
        await expectSandboxError(s.backend.grep('secret', { path: '..' }), 'PATH_VIOLATION');
        expect(await fs.readFile(secret(), 'utf8')).toBe('top secret\n');
        expect(existsSync(path.join(s.outside, 'new.txt'))).toBe(false);
      });

      test('absolute paths outside the root are refused', async () => {
        await expectSandboxError(s.backend.read('/etc/passwd'), 'PATH_VIOLATION');
        await expectSandboxError(s.backend.read(secret()), 'PATH_VIOLATION');
        await expectSandboxError(
          s.backend.write(path.join(s.outside, 'abs.txt'), 'x'),
          'PATH_VIOLATION',
        );
        await expectSandboxError(s.backend.delete(secret()), 'PATH_VIOLATION');
        await expectSandboxError(s.backend.ls('/'), 'PATH_VIOLATION');
        expect(existsSync(path.join(s.outside, 'abs.txt'))).toBe(false);
        expect(existsSync(secret())).toBe(true);
      });

      test('a symlinked directory pointing outside is refused and not traversed', async () => {
        await fs.symlink(s.outside, path.join(s.root, 'escape'));
        await expectSandboxError(s.backend.read('escape/secret.txt'), 'PATH_VIOLATION');
        await expectSandboxError(s.backend.write('escape/new.txt', 'x'), 'PATH_VIOLATION');
        await expectSandboxError(s.backend.write('escape/sub/new.txt', 'x'), 'PATH_VIOLATION');
        await expectSandboxError(s.backend.ls('escape'), 'PATH_VIOLATION');
        await expectSandboxError(s.backend.execute('ls', { cwd: 'escape' }), 'PATH_VIOLATION');
        expect(await s.backend.glob('**/*.txt')).toEqual([]);
        expect(await s.backend.grep('top secret')).toEqual([]);
        expect(existsSync(path.join(s.outside, 'new.txt'))).toBe(false);
        expect(existsSync(path.join(s.outside, 'sub'))).toBe(false);
      });

      test('a symlinked file pointing outside is refused for read, write and edit', async () => {
        await fs.symlink(secret(), path.join(s.root, 'secret-link'));
        await expectSandboxError(s.backend.read('secret-link'), 'PATH_VIOLATION');
        await expectSandboxError(s.backend.write('secret-link', 'pwned'), 'PATH_VIOLATION');
        await expectSandboxError(s.backend.edit('secret-link', 'top', 'pwned'), 'PATH_VIOLATION');
        expect(await fs.readFile(secret(), 'utf8')).toBe('top secret\n');
      });

      test('a dangling symlink pointing outside cannot be used to create a file there', async () => {
        const target = path.join(s.outside, 'created-through-link.txt');
        await fs.symlink(target, path.join(s.root, 'dangling'));
        await fs.symlink(path.join(s.root, 'dangling'), path.join(s.root, 'chain'));
        await expectSandboxError(s.backend.write('dangling', 'x'), 'PATH_VIOLATION');
        await expectSandboxError(s.backend.write('chain', 'x'), 'PATH_VIOLATION');
        expect(existsSync(target)).toBe(false);
      });

      test('deleting a symlink removes the link, never its target outside', async () => {
        await fs.symlink(secret(), path.join(s.root, 'secret-link'));
        await s.backend.delete('secret-link');
        expect(existsSync(path.join(s.root, 'secret-link'))).toBe(false);
        expect(await fs.readFile(secret(), 'utf8')).toBe('top secret\n');
      });

      test('protected paths cannot be written, edited or deleted (but can be read)', async () => {
        await fs.mkdir(path.join(s.root, '.cognition'));
        await fs.writeFile(path.join(s.root, '.cognition', 'state.json'), '{"v":1}');
        for (const attempt of [
          '.cognition/state.json',
          '.cognition/new.json',
          './.cognition/new.json',
          'sub/../.cognition/new.json',
          path.join(s.backend.root, '.cognition', 'new.json'),
        ]) {
          await expectSandboxError(s.backend.write(attempt, 'x'), 'PROTECTED_PATH');
        }
        await expectSandboxError(
          s.backend.edit('.cognition/state.json', '1', '2'),
          'PROTECTED_PATH',
        );
        await expectSandboxError(s.backend.delete('.cognition/state.json'), 'PROTECTED_PATH');
        await expectSandboxError(s.backend.delete('.cognition'), 'PROTECTED_PATH');
        expect(await s.backend.read('.cognition/state.json')).toBe('{"v":1}');
        expect(existsSync(path.join(s.root, '.cognition', 'new.json'))).toBe(false);
      });

      test('a symlink to a protected path does not get around the protection', async () => {
        await fs.mkdir(path.join(s.root, '.cognition'));
        await fs.symlink('.cognition', path.join(s.root, 'alias'));
        await expectSandboxError(s.backend.write('alias/x.json', 'x'), 'PROTECTED_PATH');
        expect(existsSync(path.join(s.root, '.cognition', 'x.json'))).toBe(false);
      });

      test('NUL bytes in paths are refused', async () => {
        await expectSandboxError(s.backend.read('a\0b'), 'INVALID_ARGUMENT');
      });

      test('shell metacharacters cannot start a second command on the host', async () => {
        // attempt -> what echo prints when the operators are plain arguments (no shell)
        const attempts: Array<[string, string]> = [
          ['echo hi; touch pwned1', 'hi ; touch pwned1'],
          ['echo hi && touch pwned2', 'hi && touch pwned2'],
          ['echo hi | touch pwned3', 'hi | touch pwned3'],
          ['echo $(touch pwned4)', '$ ( touch pwned4 )'],
          ['echo `touch pwned5`', '`touch pwned5`'],
          ['echo hi > pwned6', 'hi > pwned6'],
        ];
        const outputs: string[] = [];
        for (const [attempt] of attempts) outputs.push((await s.backend.execute(attempt)).output);
        const created = attempts.map((_, i) => existsSync(path.join(s.root, `pwned${i + 1}`)));
        if (s.backend.kind === 'local') {
          expect(outputs).toEqual(attempts.map(([, printed]) => `${printed}\n`));
          expect(created).toEqual(attempts.map(() => false));
        } else {
          // Docker runs `sh -c` inside the container: the operators work there, and only there
          // (the container is the isolation boundary; its hardening is tested separately).
          expect(created).toEqual(attempts.map(() => true));
          const uid = await s.backend.execute('echo start; id -u');
          expect(uid.output).toMatch(/^start\n\d+\n$/);
          expect(uid.output).not.toMatch(/\n0\n$/);
        }
      });
    });

    describe('lifecycle', () => {
      test('terminate is idempotent and the backend refuses work afterwards', async () => {
        const s = await pool.create('life');
        await s.backend.terminate();
        await s.backend.terminate();
        await expectSandboxError(s.backend.execute('echo x'), 'TERMINATED');
        await expectSandboxError(s.backend.read('x'), 'TERMINATED');
      });

      test('terminate stops a running command', async () => {
        const s = await pool.create('life');
        await s.backend.execute('true');
        const started = Date.now();
        const running = s.backend.execute('sleep 30', { timeoutMs: 20_000 });
        await new Promise((resolve) => setTimeout(resolve, 300));
        await s.backend.terminate();
        const result = await running;
        expect(result.exitCode).not.toBe(0);
        expect(Date.now() - started).toBeLessThan(10_000);
      });

      test('release terminates the backends of that session', async () => {
        const s = await pool.create('life');
        await getFactory().release(s.sessionId);
        await expectSandboxError(s.backend.ls(), 'TERMINATED');
      });

      test('an invalid session id is INVALID_ARGUMENT', async () => {
        const root = await fs.mkdtemp(path.join(os.tmpdir(), 'cognition-sandbox-'));
        try {
          await expectSandboxError(getFactory().forSession('../evil', root), 'INVALID_ARGUMENT');
          await expectSandboxError(getFactory().forSession('', root), 'INVALID_ARGUMENT');
        } finally {
          await fs.rm(root, { recursive: true, force: true });
        }
      });
    });
  });
}
