import { existsSync, promises as fs } from 'node:fs';
import path from 'node:path';
import { expectSandboxError } from './expect-sandbox-error';
import type { ConformanceSession, SessionPool } from './session-pool';

/**
 * The file operations of the conformance suite: exact content, line ranges, listing, edit, glob,
 * grep, delete.
 */
export function fileOperationsConformance(pool: SessionPool): void {
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
}
