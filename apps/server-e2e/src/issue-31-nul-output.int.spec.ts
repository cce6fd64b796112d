import { eventsOf, readSse } from '@cognition/runtime/testing/http';
import {
  FakeOpenAIServer,
  createSession,
  postMessage,
  startAgentServer,
} from './testing/agent-server';
import { http } from './testing/http';
import type { ServerDatabase } from './testing/postgres';
import { postgresServerDatabase, sqliteServerDatabase } from './testing/postgres';
import type { ServerProcess } from './testing/server-process';
import { tempWorkspace } from './testing/server-process';

/**
 * Issue 31: NUL characters in what the model or a tool produces (not in API input, which is
 * refused) must not fail a run on any backend — PostgreSQL's text and JSON columns cannot hold
 * U+0000. The model streams a NUL in its text and calls `execute` on a command that prints one.
 */

const NUL = '\u0000';

describe.each([
  ['sqlite', () => sqliteServerDatabase('cognition-issue31-nul-')],
  ['postgres', () => postgresServerDatabase()],
])('issue 31: NUL in model and tool output (%s)', (_name, makeDatabase) => {
  let fake: FakeOpenAIServer;
  let database: ServerDatabase;
  let server: ServerProcess | undefined;
  // Made in beforeAll: a describe that a `-t` filter skips runs no hooks, so nothing is left.
  let workspace: ReturnType<typeof tempWorkspace>;

  beforeAll(async () => {
    workspace = tempWorkspace('cognition-issue31-nul-ws-');
    database = await makeDatabase();
    fake = await FakeOpenAIServer.start({
      fallback: (request) =>
        request.body.messages?.at(-1)?.role === 'tool'
          ? { text: [`Done${NUL}`, ' now.'] }
          : {
              text: [`Looking${NUL}`, ' at it.'],
              toolCalls: [{ name: 'execute', args: { command: "printf 'x\\000y'" } }],
            },
    });
  });
  afterAll(async () => {
    await server?.stop();
    await fake.close();
    await database.drop();
    workspace.remove();
  });

  it('the turn ends with done, and the stored answer and its replay read back', async () => {
    server = await startAgentServer(fake, workspace.dir, database.env);
    const sessionId = await createSession(server.url);
    const live = eventsOf(
      (await readSse(await postMessage(server.url, sessionId, { content: 'look' }))).frames,
    );
    expect(live.map((e) => e.event)).not.toContain('error');
    expect(live.at(-1)?.event).toBe('done');
    const text = (events: typeof live) =>
      events
        .filter((e) => e.event === 'token')
        .map((e) => String(e.data['content']))
        .join('');
    const output = (events: typeof live) =>
      events.find((e) => e.event === 'tool_result')?.data['output'];
    // The replay of the stored run (after its first event) says what the live stream said.
    const replay = eventsOf(
      (
        await readSse(
          await fetch(`${server.url}/sessions/${sessionId}/events`, {
            headers: { 'Last-Event-ID': live[0]?.id ?? '' },
          }),
        )
      ).frames,
    );
    expect(text(replay)).toBe(text(live));
    expect(output(replay)).toEqual(output(live));
    expect(replay.at(-1)?.event).toBe('done');
    // The stored messages read back, and a second turn on the thread (its history holds what
    // the first produced) works too.
    const messages = await http(server.url, 'GET', `/sessions/${sessionId}/messages`);
    expect(messages.status).toBe(200);
    expect(JSON.stringify(messages.json)).toContain('Done');
    const again = eventsOf(
      (await readSse(await postMessage(server.url, sessionId, { content: 'again' }))).frames,
    );
    expect(again.at(-1)?.event).toBe('done');
  });
});
