import { promises as fs } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { Readable } from 'node:stream';
import { createLocalSandbox } from './local-backend';
import { expectSandboxError } from './testing';

/** Reads `stream` until `text` appeared, returning everything read. */
function readUntil(stream: Readable, text: string): Promise<string> {
  return new Promise((resolve, reject) => {
    let seen = '';
    const onData = (chunk: Buffer): void => {
      seen += chunk.toString('utf8');
      if (seen.includes(text)) {
        stream.off('data', onData);
        resolve(seen);
      }
    };
    stream.on('data', onData);
    stream.once('end', () => reject(new Error(`stream ended before "${text}": ${seen}`)));
  });
}

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
      const child = await backend.spawn?.(
        'sh',
        ['-c', 'echo "cwd=$PWD home=$HOME secret=${COGNITION_SPAWN_SECRET-unset} x=$X"; cat'],
        { env: { X: 'given' } },
      );
      if (!child) throw new Error('the local backend spawns');
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

  test('a missing program, or a cwd outside the workspace, is refused', async () => {
    const backend = await factory.forSession('spawn-bad', path.join(base, 'bad'));
    await expectSandboxError(
      backend.spawn?.('no-such-program-cognition-xyz', []) ?? Promise.resolve(),
      'INVALID_COMMAND',
    );
    await expectSandboxError(
      backend.spawn?.('cat', [], { cwd: '..' }) ?? Promise.resolve(),
      'PATH_VIOLATION',
    );
    await factory.release('spawn-bad');
  });

  test('terminating the session kills a spawned process and what it started', async () => {
    const backend = await factory.forSession('spawn-term', path.join(base, 'term'));
    const child = await backend.spawn?.('sh', ['-c', 'sleep 30 & echo started; wait']);
    if (!child) throw new Error('the local backend spawns');
    await readUntil(child.stdout, 'started');
    await factory.release('spawn-term');
    expect(await child.exited).toBe(128 + os.constants.signals.SIGKILL);
    await expectSandboxError(backend.spawn?.('cat', []) ?? Promise.resolve(), 'TERMINATED');
  });
});
