import { existsSync } from 'node:fs';
import path from 'node:path';
import type { ExecuteResult, ExecutionBackend, ExecutionBackendFactory } from '../port';
import { expectSandboxError } from './expect-sandbox-error';
import type { SessionPool } from './session-pool';

/** Exit 0 when none of the processes whose pids are in `files` runs (gone, or a zombie). */
function processesGoneCheck(...files: string[]): string {
  const checks = files
    .map((file) => `p=$(cat ${file}); test ! -e /proc/$p || grep -q ") Z" /proc/$p/stat || exit 1`)
    .join('; ');
  return `sh -c '${checks}; exit 0'`;
}

/** A command that starts a background child, writes both pids, and waits. */
const TREE = `sh -c 'sleep 30 & echo $! > child.pid; echo $$ > leader.pid; wait'`;

async function waitForFiles(dir: string, names: string[], ms = 10_000): Promise<void> {
  for (const deadline = Date.now() + ms; Date.now() < deadline;) {
    if (names.every((name) => existsSync(path.join(dir, name)))) {
      // Written by `echo >`: give the write a moment to complete.
      await new Promise((resolve) => setTimeout(resolve, 50));
      return;
    }
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
  throw new Error(`${names.join(', ')} did not appear in ${dir}`);
}

/** A running command whose settling is observable. */
function track(promise: Promise<ExecuteResult>): {
  result: Promise<ExecuteResult>;
  settled: () => boolean;
} {
  let done = false;
  const result = promise.finally(() => {
    done = true;
  });
  return { result, settled: () => done };
}

/**
 * What a crash must not leave behind: a command's children die with it on abort, and
 * `reapOrphans` — called on a fresh factory, as a restarted server or the node that takes a run
 * over would — ends the process group of a command that still runs, and only the targeted
 * session's (and run's) commands. The crash itself (kill -9 of the server) is the server's e2e
 * test; here the original backend stays alive, so the command ending at all proves the reap.
 */
export function orphanConformance(
  pool: SessionPool,
  getFactory: () => ExecutionBackendFactory,
  freshFactory: () => ExecutionBackendFactory,
): void {
  describe('orphans', () => {
    test('aborting kills the children of the command too', async () => {
      const s = await pool.create('orph-abort');
      await s.backend.write('tree/.keep', '');
      const controller = new AbortController();
      const running = s.backend.execute(
        `sh -c 'sh -c "trap \\"\\" TERM; echo \\$\\$ > child.pid; exec sleep 30" & echo $$ > leader.pid; wait'`,
        { cwd: 'tree', signal: controller.signal, timeoutMs: 60_000 },
      );
      await waitForFiles(path.join(s.root, 'tree'), ['child.pid', 'leader.pid']);
      const started = Date.now();
      controller.abort();
      const result = await running;
      expect(result.exitCode).not.toBe(0);
      expect(Date.now() - started).toBeLessThan(8000);
      const check = await s.backend.execute(processesGoneCheck('child.pid', 'leader.pid'), {
        cwd: 'tree',
      });
      expect(check.exitCode).toBe(0);
    });

    test('reapOrphans on a fresh factory ends a command its run left running, children too', async () => {
      const s = await pool.create('orph-crash', { runId: 'run-crashed' });
      await s.backend.write('crash/.keep', '');
      const started = Date.now();
      const running = track(s.backend.execute(TREE, { cwd: 'crash', timeoutMs: 60_000 }));
      await waitForFiles(path.join(s.root, 'crash'), ['child.pid', 'leader.pid']);
      const report = await freshFactory().reapOrphans({
        sessionId: s.sessionId,
        runId: 'run-crashed',
      });
      expect(report).toEqual({ killed: 1, ended: 0, unreachable: 0 });
      const result = await running.result;
      expect(result.exitCode).not.toBe(0);
      expect(result.timedOut).toBe(false);
      expect(Date.now() - started).toBeLessThan(15_000);
      const check = await s.backend.execute(processesGoneCheck('child.pid', 'leader.pid'), {
        cwd: 'crash',
      });
      expect(check.exitCode).toBe(0);
      // The records went with the commands: reaping again finds nothing.
      expect(
        await freshFactory().reapOrphans({ sessionId: s.sessionId, runId: 'run-crashed' }),
      ).toEqual({ killed: 0, ended: 0, unreachable: 0 });
    });

    test('reapOrphans ends only the targeted run, then the whole session, never another session', async () => {
      const s = await pool.create('orph-scope', { runId: 'run-a' });
      const other = await pool.create('orph-other', { runId: 'run-a' });
      // The session's sandbox is up (with docker: its container) before the commands start.
      await s.backend.execute('true');
      await other.backend.execute('true');
      const runB: ExecutionBackend = await getFactory().forSession(s.sessionId, s.root, {
        runId: 'run-b',
      });
      const stopOther = new AbortController();
      const ofRunB = track(runB.execute('sleep 30', { timeoutMs: 60_000 }));
      const ofOther = track(
        other.backend.execute('sleep 30', { timeoutMs: 60_000, signal: stopOther.signal }),
      );
      try {
        await new Promise((resolve) => setTimeout(resolve, 500));
        const fresh = freshFactory();
        expect(await fresh.reapOrphans({ sessionId: s.sessionId, runId: 'run-a' })).toEqual({
          killed: 0,
          ended: 0,
          unreachable: 0,
        });
        await new Promise((resolve) => setTimeout(resolve, 300));
        expect(ofRunB.settled()).toBe(false);
        expect(ofOther.settled()).toBe(false);

        const sessionWide = await fresh.reapOrphans({ sessionId: s.sessionId });
        expect(sessionWide.killed).toBe(1);
        expect((await ofRunB.result).exitCode).not.toBe(0);
        await new Promise((resolve) => setTimeout(resolve, 300));
        expect(ofOther.settled()).toBe(false);
      } finally {
        stopOther.abort();
        await ofOther.result;
      }
    });

    test('a session or run id that could name a path is INVALID_ARGUMENT', async () => {
      await expectSandboxError(
        freshFactory().reapOrphans({ sessionId: '../evil' }),
        'INVALID_ARGUMENT',
      );
      await expectSandboxError(
        freshFactory().reapOrphans({ sessionId: 'fine', runId: '../../x' }),
        'INVALID_ARGUMENT',
      );
      const s = await pool.create('orph-bad');
      await expectSandboxError(
        getFactory().forSession(s.sessionId, s.root, { runId: 'a/b' }),
        'INVALID_ARGUMENT',
      );
    });
  });
}
