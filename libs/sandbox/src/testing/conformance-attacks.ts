import { existsSync, promises as fs } from 'node:fs';
import path from 'node:path';
import { expectSandboxError } from './expect-sandbox-error';
import type { ConformanceSession, SessionPool } from './session-pool';

/**
 * The attacks of the conformance suite, which every backend must refuse: traversal, absolute
 * paths, symlinks out of the root, protected paths, NUL bytes, shell injection.
 */
export function attacksConformance(pool: SessionPool): void {
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
      await expectSandboxError(s.backend.edit('.cognition/state.json', '1', '2'), 'PROTECTED_PATH');
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
}
