import { expectSandboxError, runSandboxConformance } from '@cognition/sandbox/testing';
import { promises as fs, readFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { createLocalSandbox } from './local-backend';

const factory = createLocalSandbox({ killGraceMs: 300 });
runSandboxConformance(
  'local',
  () => factory,
  () => createLocalSandbox({ killGraceMs: 300 }),
);

describe('local backend specifics', () => {
  let base: string;
  beforeAll(async () => {
    base = await fs.mkdtemp(path.join(os.tmpdir(), 'cognition-local-'));
  });
  afterAll(() => fs.rm(base, { recursive: true, force: true }));

  test('HOME defaults to the session root and PATH to the configured one', async () => {
    const custom = createLocalSandbox({ path: '/usr/bin:/bin' });
    const backend = await custom.forSession('local-env', path.join(base, 'env'));
    const result = await backend.execute('env');
    expect(result.output).toContain(`HOME=${backend.root}\n`);
    expect(result.output).toContain('PATH=/usr/bin:/bin\n');
    expect(result.output).toContain(`COGNITION_WORKSPACE=${backend.root}\n`);
    await custom.release('local-env');
  });

  test('$VARS expand from the command environment only, each into one argument', async () => {
    const backend = await factory.forSession('local-vars', path.join(base, 'vars'));
    const result = await backend.execute('printf [%s] $GREETING "${GREETING}!" $UNSET_VAR', {
      env: { GREETING: 'a b; rm -rf /' },
    });
    expect(result.output).toBe('[a b; rm -rf /][a b; rm -rf /!][]');
    await factory.release('local-vars');
  });

  test('a command cannot outlive the session: timed-out groups are gone from the host', async () => {
    const backend = await factory.forSession('local-tree', path.join(base, 'tree'));
    const result = await backend.execute(
      `sh -c 'sh -c "trap \\"\\" TERM; echo \\$\\$ > grandchild.pid; exec sleep 30" & sleep 30'`,
      { timeoutMs: 500 },
    );
    expect(result.timedOut).toBe(true);
    const pid = Number((await backend.read('grandchild.pid')).trim());
    expect(await goneWithin(pid, 2000)).toBe(true);
    await factory.release('local-tree');
  });

  test('processes left in the background are killed when the command exits', async () => {
    const backend = await factory.forSession('local-bg', path.join(base, 'bg'));
    const started = Date.now();
    const result = await backend.execute(`sh -c 'sleep 30 & echo $! > bg.pid; echo done'`);
    expect(result.output).toBe('done\n');
    expect(Date.now() - started).toBeLessThan(5000);
    const pid = Number((await backend.read('bg.pid')).trim());
    // The group's SIGKILL is sent as the command exits; the kernel takes the process down a
    // moment later (a busy machine showed it still there right after).
    expect(await goneWithin(pid, 2000)).toBe(true);
    await factory.release('local-bg');
  });

  test('invalid configuration names the field', () => {
    expect(() => createLocalSandbox({ timeoutMs: 0 })).toThrow(/local\.timeoutMs/);
    expect(() => createLocalSandbox({ protectedPaths: ['../x'] })).not.toThrow();
  });

  test('a protected path outside the root is rejected when the session starts', async () => {
    const bad = createLocalSandbox({ protectedPaths: ['../x'] });
    await expectSandboxError(
      bad.forSession('local-bad', path.join(base, 'bad')),
      'INVALID_ARGUMENT',
    );
  });
});

/** Whether a process exists and is not a zombie awaiting its reaper. */
async function goneWithin(pid: number, ms: number): Promise<boolean> {
  for (const deadline = Date.now() + ms; Date.now() < deadline;) {
    if (!isAliveAndNotZombie(pid)) return true;
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
  return !isAliveAndNotZombie(pid);
}

function isAliveAndNotZombie(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return !/\) Z /.test(readFileSync(`/proc/${pid}/stat`, 'utf8'));
  } catch {
    return false;
  }
}
