import { eventsOf, readSse } from '@cognition/runtime/testing/http';
import type { RecordedRequest } from '@cognition/runtime/testing/http';
import {
  FakeOpenAIServer,
  createSession,
  postMessage,
  startAgentServer,
} from './testing/agent-server';
import { http } from './testing/http';
import { postgresServerDatabase, sqliteServerDatabase } from './testing/postgres';
import type { ServerProcess } from './testing/server-process';
import { tempWorkspace } from './testing/server-process';

/**
 * Double-texting survives a crash: a run is streaming, a second message arrives with each
 * `multitask_strategy`, the server is killed (SIGKILL) right after the second POST streamed its
 * `queued` event, and a new process on the same database finishes the job: the client
 * re-attaches to the second run with the `queued` event's id and reads it to `done`, and the
 * history reads as the strategy promises.
 */

type Json = Record<string, unknown>;
type Strategy = 'enqueue' | 'interrupt' | 'rollback';

const FIRST_ANSWER = Array.from({ length: 60 }, (_, i) => `slow${i + 1}`).join(' ');
const SECOND_ANSWER = 'The second answer.';

/** The last user message decides: the second question is answered at once, the first slowly. */
function reply(request: RecordedRequest) {
  const users = (request.body.messages ?? []).filter((m) => m.role === 'user');
  const last = users.at(-1)?.content;
  return last === 'second' ? { text: SECOND_ANSWER } : { text: FIRST_ANSWER, chunkDelayMs: 40 };
}

function describeRestarts(
  name: string,
  database: () => Promise<{ env: Record<string, string>; drop(): Promise<void> }>,
): void {
  describe(`double-texting across a kill -9, ${name}`, () => {
    let fake: FakeOpenAIServer;
    const workspace = tempWorkspace();
    let db: { env: Record<string, string>; drop(): Promise<void> };
    let server: ServerProcess | undefined;
    const start = () => startAgentServer(fake, workspace.dir, db.env);

    beforeAll(async () => {
      fake = await FakeOpenAIServer.start({ fallback: reply });
      db = await database();
      server = await start();
    }, 60_000);
    afterAll(async () => {
      await server?.stop('SIGKILL');
      await fake.close();
      await db.drop();
      workspace.remove();
    });

    const rows = async (url: string, sessionId: string) =>
      (
        (await http(url, 'GET', `/sessions/${sessionId}/messages?limit=100&order=asc`)).json?.[
          'messages'
        ] as Json[]
      ).map((m) => `${String(m['role'])}:${String(m['content'])}`);

    it.each<Strategy>(['enqueue', 'interrupt', 'rollback'])(
      '%s: the second run is not lost and finishes after the restart',
      async (strategy) => {
        if (!server) throw new Error('no server');
        const sessionId = await createSession(server.url);
        // The first run streams (slowly); read a few of its tokens.
        const first = eventsOf(
          (
            await readSse(
              await postMessage(server.url, sessionId, { content: 'first' }),
              (_f, frames) => eventsOf(frames).filter((e) => e.event === 'token').length >= 3,
            )
          ).frames,
        );
        const firstRunId = first[0]?.id.split(':')[0] ?? '';
        const queued = eventsOf(
          (
            await readSse(
              await postMessage(server.url, sessionId, {
                content: 'second',
                multitask_strategy: strategy,
              }),
              (_f, frames) => eventsOf(frames).length >= 1,
            )
          ).frames,
        );
        // Behind the first run; with interrupt/rollback that run may already have ended.
        expect(queued[0]).toMatchObject({ event: 'queued' });
        if (strategy === 'enqueue') expect(queued[0]?.data['ahead']).toBe(1);
        const secondRunId = String(queued[0]?.data['run_id']);
        await server.stop('SIGKILL');
        server = await start();

        const rest = eventsOf(
          (
            await readSse(
              await postMessage(
                server.url,
                sessionId,
                { content: 'ignored on a reconnect' },
                {
                  'Last-Event-ID': queued[0]?.id ?? '',
                },
              ),
            )
          ).frames,
        );
        expect(rest[0]?.event).toBe('reconnected');
        const done = rest.at(-1);
        expect(done?.event).toBe('done');
        expect((done?.data['assistant_data'] as Json)['content']).toBe(SECOND_ANSWER);
        const ids = rest.map((e) => e.id);
        expect(ids).toEqual([...new Set(ids)].sort());

        const second = await http(server.url, 'GET', `/sessions/${sessionId}/runs/${secondRunId}`);
        expect(second.json).toMatchObject({
          status: 'completed',
          multitask_strategy: strategy,
          supersedes_run_id: firstRunId,
        });
        const firstRun = await http(server.url, 'GET', `/sessions/${sessionId}/runs/${firstRunId}`);
        const history = await rows(server.url, sessionId);
        switch (strategy) {
          case 'enqueue':
            expect(firstRun.json?.['status']).toBe('completed');
            expect(history).toEqual([
              'user:first',
              `assistant:${FIRST_ANSWER}`,
              'user:second',
              `assistant:${SECOND_ANSWER}`,
            ]);
            break;
          case 'interrupt':
            expect(firstRun.json?.['status']).toBe('interrupted');
            expect(history[0]).toBe('user:first');
            expect(history.slice(-2)).toEqual(['user:second', `assistant:${SECOND_ANSWER}`]);
            break;
          case 'rollback':
            expect(firstRun.status).toBe(404);
            expect(history).toEqual(['user:second', `assistant:${SECOND_ANSWER}`]);
            break;
        }
        const session = await http(server.url, 'GET', `/sessions/${sessionId}`);
        expect(session.json?.['message_count']).toBe(history.length);
      },
      60_000,
    );
  });
}

describeRestarts('SQLite', () => sqliteServerDatabase('cognition-multitask-sqlite-'));

describeRestarts('PostgreSQL', postgresServerDatabase);
