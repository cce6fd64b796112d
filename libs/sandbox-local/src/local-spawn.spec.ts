import { readStreamUntil as readUntil } from '@cognition/sandbox/testing';
import { promises as fs } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { createLocalSandbox } from './local-backend';

/** The local backend's own environment rules (the rest of spawn is the sandbox conformance). */
describe('local backend spawn (long-running processes such as MCP stdio servers)', () => {
  const factory = createLocalSandbox({ killGraceMs: 300, path: '/usr/bin:/bin' });
  let base: string;
  beforeAll(async () => {
    base = await fs.mkdtemp(path.join(os.tmpdir(), 'cognition-spawn-'));
  });
  afterAll(() => fs.rm(base, { recursive: true, force: true }));

  test('runs in the workspace with the allowlisted environment and talks over stdio', async () => {
    process.env['COGNITION_SPAWN_SECRET'] = 'server-secret';
    try {
      const backend = await factory.forSession('spawn-env', path.join(base, 'env'));
      const child = await backend.spawn(
        'sh',
        ['-c', 'echo "cwd=$PWD home=$HOME secret=${COGNITION_SPAWN_SECRET-unset} x=$X"; cat'],
        { env: { X: 'given' } },
      );
      const banner = await readUntil(child.stdout, '\n');
      expect(banner).toBe(`cwd=${backend.root} home=${backend.root} secret=unset x=given\n`);
      child.stdin.write('ping\n');
      expect(await readUntil(child.stdout, 'ping')).toBe('ping\n');
      child.kill();
      expect(await child.exited).toBe(128 + os.constants.signals.SIGTERM);
      await factory.release('spawn-env');
    } finally {
      delete process.env['COGNITION_SPAWN_SECRET'];
    }
  });
});
