import { promises as fs } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { PathGuard } from './paths';
import { expectSandboxError } from './testing';

describe('PathGuard', () => {
  let base: string;
  let root: string;
  beforeEach(async () => {
    base = await fs.mkdtemp(path.join(os.tmpdir(), 'cognition-paths-'));
    root = path.join(base, 'root');
    await fs.mkdir(root);
  });
  afterEach(() => fs.rm(base, { recursive: true, force: true }));

  test('resolves existing and not-yet-existing paths relative to the real root', async () => {
    await fs.mkdir(path.join(root, 'a'));
    const guard = await PathGuard.create({ root });
    expect(await guard.resolve('a')).toMatchObject({ relative: 'a', exists: true });
    expect(await guard.resolve('a/b/c.txt')).toMatchObject({
      relative: 'a/b/c.txt',
      exists: false,
      absolute: path.join(await fs.realpath(root), 'a', 'b', 'c.txt'),
    });
    expect(await guard.resolve('')).toMatchObject({ relative: '', exists: true });
  });

  test('a root reached through a symlink is resolved once, paths through either work', async () => {
    const alias = path.join(base, 'alias');
    await fs.symlink(root, alias);
    const guard = await PathGuard.create({ root: alias });
    expect(guard.root).toBe(await fs.realpath(root));
    expect(await guard.resolve(path.join(alias, 'x'))).toMatchObject({ relative: 'x' });
  });

  test('dangling symlinks are followed to where they point', async () => {
    const outside = path.join(base, 'outside');
    await fs.symlink(path.join(outside, 'file.txt'), path.join(root, 'dangling-file'));
    await fs.symlink(path.join(outside, 'dir'), path.join(root, 'dangling-dir'));
    await fs.symlink('inside-later.txt', path.join(root, 'dangling-inside'));
    const guard = await PathGuard.create({ root });
    await expectSandboxError(guard.resolve('dangling-file'), 'PATH_VIOLATION');
    await expectSandboxError(guard.resolve('dangling-dir/new/file.txt'), 'PATH_VIOLATION');
    expect(await guard.resolve('dangling-inside')).toMatchObject({
      relative: 'inside-later.txt',
      exists: false,
    });
  });

  test('a symlink loop is a PATH_VIOLATION', async () => {
    await fs.symlink('loop-b', path.join(root, 'loop-a'));
    await fs.symlink('loop-a', path.join(root, 'loop-b'));
    const guard = await PathGuard.create({ root });
    await expectSandboxError(guard.resolve('loop-a/x'), 'PATH_VIOLATION');
  });

  test('the virtual root maps container paths into the root, and nothing else', async () => {
    const guard = await PathGuard.create({ root, virtualRoot: '/workspace' });
    expect(await guard.resolve('/workspace/src/a.ts')).toMatchObject({ relative: 'src/a.ts' });
    expect(await guard.resolve('/workspace')).toMatchObject({ relative: '' });
    await expectSandboxError(guard.resolve('/workspace/../etc/passwd'), 'PATH_VIOLATION');
    await expectSandboxError(guard.resolve('/workspaces/x'), 'PATH_VIOLATION');
  });

  test('nested protected paths protect their subtree and every ancestor from deletion', async () => {
    const guard = await PathGuard.create({ root, protectedPaths: ['./config/secrets/'] });
    const target = async (p: string) => guard.resolve(p);
    await expectSandboxError(
      guard.assertWritable(await target('config/secrets/key'), 'x', 'write'),
      'PROTECTED_PATH',
    );
    await expectSandboxError(
      guard.assertWritable(await target('config'), 'config', 'delete'),
      'PROTECTED_PATH',
    );
    await expect(
      guard.assertWritable(await target('config/other.json'), 'x', 'write'),
    ).resolves.toBeUndefined();
    await expect(
      guard.assertWritable(await target('config/secretsX'), 'x', 'delete'),
    ).resolves.toBeUndefined();
  });

  test.each(['', '.', '..', '../x', '/etc'])('protected path %j is rejected', async (bad) => {
    await expectSandboxError(PathGuard.create({ root, protectedPaths: [bad] }), 'INVALID_ARGUMENT');
  });

  test('a missing root is NOT_FOUND', async () => {
    await expectSandboxError(PathGuard.create({ root: path.join(base, 'nope') }), 'NOT_FOUND');
  });
});
