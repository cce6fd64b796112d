import { spawn } from 'node:child_process';
import { existsSync, promises as fs } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { bootId, processStartTime } from './exec-records';
import type { ExecRecord } from './exec-records';
import { createLocalSandbox } from './local-backend';

/** The backend-specific half of the orphan cases (the conformance suite has the rest). */
describe('local backend: records of running commands and the reaper', () => {
  let base: string;
  let stateDir: string;
  beforeEach(async () => {
    base = await fs.mkdtemp(path.join(os.tmpdir(), 'cognition-orphans-'));
    stateDir = path.join(base, 'state');
  });
  afterEach(() => fs.rm(base, { recursive: true, force: true }));

  /** A `sleep 30` leading its own process group, started by the test (not by a backend). */
  function groupLeader(): { pid: number; kill: () => void } {
    const child = spawn('sleep', ['30'], { detached: true, stdio: 'ignore' });
    child.unref();
    const pid = child.pid ?? 0;
    return {
      pid,
      kill: () => {
        try {
          process.kill(-pid, 'SIGKILL');
        } catch {
          // gone already
        }
      },
    };
  }

  async function writeRecord(sessionId: string, record: Partial<ExecRecord>): Promise<string> {
    const dir = path.join(stateDir, sessionId);
    await fs.mkdir(dir, { recursive: true });
    const file = path.join(dir, `${Math.random().toString(36).slice(2)}.json`);
    await fs.writeFile(
      file,
      JSON.stringify({
        sessionId,
        runId: 'run-1',
        bootId: bootId(),
        hostname: os.hostname(),
        ownerPid: 1,
        kind: 'execute',
        command: 'sleep 30',
        startedAt: new Date().toISOString(),
        ...record,
      }),
    );
    return file;
  }

  function alive(pid: number): boolean {
    return processStartTime(pid) !== undefined;
  }

  test('a command is recorded while it runs (pid, start time, run) and unrecorded when it ends', async () => {
    const factory = createLocalSandbox({ stateDir });
    const backend = await factory.forSession('rec', path.join(base, 'ws'), { runId: 'run-1' });
    const running = backend.execute(`sh -c 'echo $$ > pid; sleep 1'`);
    const dir = path.join(stateDir, 'rec');
    for (let i = 0; i < 100 && !existsSync(path.join(backend.root, 'pid')); i += 1) {
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
    const [name] = await fs.readdir(dir);
    const record = JSON.parse(await fs.readFile(path.join(dir, name ?? ''), 'utf8')) as ExecRecord;
    const pid = Number((await backend.read('pid')).trim());
    expect(record).toMatchObject({
      sessionId: 'rec',
      runId: 'run-1',
      pgid: pid,
      startTime: processStartTime(pid),
      ownerPid: process.pid,
      kind: 'execute',
    });
    expect((await running).exitCode).toBe(0);
    // Its record is gone, and with it the session's directory (nothing left behind).
    await expect(fs.readdir(dir)).rejects.toMatchObject({ code: 'ENOENT' });
    await factory.release('rec');
  });

  test('a command that cannot be recorded does not run', async () => {
    await fs.mkdir(base, { recursive: true });
    // The state directory is a file: no record can be written under it.
    await fs.writeFile(stateDir, 'not a directory');
    const factory = createLocalSandbox({ stateDir });
    const backend = await factory.forSession('norec', path.join(base, 'ws'));
    const result = await backend.execute('touch ran.txt');
    expect(result.exitCode).toBe(126);
    expect(result.output).toMatch(/not run, it could not be recorded/);
    expect(existsSync(path.join(backend.root, 'ran.txt'))).toBe(false);
    await factory.release('norec');
  });

  test('a recorded pid whose start time differs (a reused pid) is left alone', async () => {
    const leader = groupLeader();
    try {
      const file = await writeRecord('reused', { pgid: leader.pid, startTime: '1' });
      const report = await createLocalSandbox({ stateDir }).reapOrphans({ sessionId: 'reused' });
      expect(report).toEqual({ killed: 0, ended: 1, unreachable: 0 });
      expect(alive(leader.pid)).toBe(true);
      expect(existsSync(file)).toBe(false);
    } finally {
      leader.kill();
    }
  });

  test('the recorded group is killed when the start time matches', async () => {
    const leader = groupLeader();
    try {
      await writeRecord('match', { pgid: leader.pid, startTime: processStartTime(leader.pid) });
      const report = await createLocalSandbox({ stateDir }).reapOrphans({
        sessionId: 'match',
        runId: 'run-1',
      });
      expect(report).toEqual({ killed: 1, ended: 0, unreachable: 0 });
      for (let i = 0; i < 100 && alive(leader.pid); i += 1) {
        await new Promise((resolve) => setTimeout(resolve, 20));
      }
      expect(alive(leader.pid)).toBe(false);
    } finally {
      leader.kill();
    }
  });

  test('records of another machine are kept, of an earlier boot of this one removed', async () => {
    const elsewhere = await writeRecord('hosts', {
      pgid: 4242,
      startTime: '1',
      bootId: 'another-boot',
      hostname: 'another-host',
    });
    const earlier = await writeRecord('hosts', {
      pgid: 4243,
      startTime: '1',
      bootId: 'another-boot',
    });
    const report = await createLocalSandbox({ stateDir }).reapOrphans({ sessionId: 'hosts' });
    expect(report).toEqual({ killed: 0, ended: 1, unreachable: 1 });
    expect(existsSync(elsewhere)).toBe(true);
    expect(existsSync(earlier)).toBe(false);
  });

  test('unreadable records and cut-short temp files are removed; pid 1 is never a target', async () => {
    const dir = path.join(stateDir, 'junk');
    await fs.mkdir(dir, { recursive: true });
    await fs.writeFile(path.join(dir, 'a.json'), '{not json');
    await fs.writeFile(path.join(dir, 'b.json.tmp'), '{"sessionId"');
    await writeRecord('junk', { pgid: 1, startTime: processStartTime(1) });
    const report = await createLocalSandbox({ stateDir }).reapOrphans({ sessionId: 'junk' });
    expect(report).toEqual({ killed: 0, ended: 0, unreachable: 0 });
    await expect(fs.readdir(dir)).rejects.toMatchObject({ code: 'ENOENT' });
  });
});
