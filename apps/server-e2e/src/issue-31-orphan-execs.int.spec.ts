import { eventsOf, readSse } from '@cognition/runtime/testing/http';
import type { SseFrame } from '@cognition/runtime/testing/http';
import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import {
  FakeOpenAIServer,
  createSession,
  eventually,
  postMessage,
  startAgentServer,
} from './testing/agent-server';
import type { ServerProcess } from './testing/server-process';
import { tempWorkspace } from './testing/server-process';

/**
 * Issue 31: a crash must not leave sandbox processes running. A run's `execute` call runs
 * `sleep 30`; the server is killed with SIGKILL a few seconds in (the sleep, in its own process
 * group, survives the server and is re-parented), and restarted on the same database and
 * workspace. Recovery must end that process group before the resumed run tells the model the
 * call was "Not run again".
 */

const ANSWER = 'Understood, the command did not complete.';

/** Whether a process group exists (a member that is not yet reaped counts). */
function groupExists(pgid: number): boolean {
  try {
    process.kill(-pgid, 0);
    return true;
  } catch {
    return false;
  }
}

/** Whether the group has a member that still runs (zombies awaiting init's reaping do not). */
function groupRuns(pgid: number): boolean {
  if (!groupExists(pgid)) return false;
  try {
    const stat = readFileSync(`/proc/${pgid}/stat`, 'utf8');
    return !/\) Z /.test(stat);
  } catch {
    // The leader is gone; the group exists, so some member still runs.
    return true;
  }
}

describe('issue 31: kill -9 while execute runs `sleep 30`', () => {
  let fake: FakeOpenAIServer;
  const workspace = tempWorkspace('cognition-issue31-');
  const pidFile = path.join(workspace.dir, 'sleep.pid');
  const doneFile = path.join(workspace.dir, 'sleep.done');
  const servers: ServerProcess[] = [];
  let pgid = 0;

  beforeAll(async () => {
    fake = await FakeOpenAIServer.start({
      fallback: (request: { body: { messages?: { role: string }[] } }) =>
        request.body.messages?.at(-1)?.role === 'tool'
          ? { text: ANSWER }
          : {
              text: 'Running it.',
              toolCalls: [
                {
                  name: 'execute',
                  args: { command: `sh -c 'echo $$ > ${pidFile}; sleep 30; touch ${doneFile}'` },
                },
              ],
            },
    });
  });
  afterAll(async () => {
    for (const server of servers) await server.stop('SIGKILL');
    if (pgid > 0 && groupExists(pgid)) process.kill(-pgid, 'SIGKILL');
    await fake.close();
    workspace.remove();
  });

  /** The servers' logs, so a failure explains itself. */
  function logs(): string {
    return servers
      .map(
        (server, i) =>
          `--- server ${i} stdout ---\n${server.stdout.join('\n')}\n--- server ${i} stderr ---\n${server.stderr.join('')}`,
      )
      .join('\n');
  }

  it('the command is ended by recovery, before the model hears "Not run again"', async () => {
    try {
      const first = await startAgentServer(fake, workspace.dir);
      servers.push(first);
      const sessionId = await createSession(first.url);
      const before = eventsOf(
        (
          await readSse(
            await postMessage(first.url, sessionId, { content: 'run the long command' }),
            (_frame: SseFrame, frames: SseFrame[]) =>
              eventsOf(frames).some((e) => e.event === 'tool_call'),
          )
        ).frames,
      );
      await eventually(() =>
        Promise.resolve(existsSync(pidFile) && readFileSync(pidFile, 'utf8').trim()),
      );
      pgid = Number(readFileSync(pidFile, 'utf8').trim());
      expect(groupRuns(pgid)).toBe(true);
      // 2-4 s into the command.
      await new Promise((resolve) => setTimeout(resolve, 2000 + Math.random() * 2000));
      await first.stop('SIGKILL');
      // The crash alone leaves it running: this is what recovery must end.
      expect(groupRuns(pgid)).toBe(true);

      const second = await startAgentServer(fake, workspace.dir);
      servers.push(second);
      const last = before.at(-1)?.id ?? '';
      const after = eventsOf(
        (
          await readSse(
            await fetch(`${second.url}/sessions/${sessionId}/events`, {
              headers: { 'Last-Event-ID': last },
            }),
          )
        ).frames,
      );
      const result = after.find((e) => e.event === 'tool_result');
      expect(String(result?.data['output'])).toMatch(/^Not run again/);
      expect(after.at(-1)?.event).toBe('done');
      // Ended by the recovery, which runs before the run resumes: gone already, or a moment
      // later (SIGKILL is delivered asynchronously; init reaps the zombies).
      await eventually(() => Promise.resolve(!groupRuns(pgid)), 5000);
      expect(second.stdout.join('\n')).toMatch(/ended 1 command\(s\) the run's dead process/);
      // The command never got to the end of its work.
      expect(existsSync(doneFile)).toBe(false);
    } catch (error) {
      const message = error instanceof Error ? error.message : String(error);
      throw new Error(`${message}\n${logs()}`, { cause: error });
    }
  });
});
