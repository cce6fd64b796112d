import {
  FakeOpenAIServer,
  createSession,
  postMessage,
  startAgentServer,
} from './testing/agent-server';
import { http } from './testing/http';
import type { ServerProcess } from './testing/server-process';
import { tempWorkspace } from './testing/server-process';
import { eventsOf, readSse } from '@cognition/runtime/testing/http';

/**
 * With `COGNITION_RUN_RECOVERY=interrupt` (the behaviour before runs were resumed, kept
 * available): a server killed with SIGKILL in the middle of a run, restarted on the same SQLite
 * workspace:
 * the run is `interrupted`, the history holds what was checkpointed (and the projection matches
 * what the model is given next), a resumed stream gets the run's terminal event, and the session
 * takes a new message.
 */

type Json = Record<string, unknown>;

let fake: FakeOpenAIServer;
const workspace = tempWorkspace();
let server: ServerProcess | undefined;
const INTERRUPT = { COGNITION_RUN_RECOVERY: 'interrupt' };

beforeAll(async () => {
  fake = await FakeOpenAIServer.start();
});

afterEach(async () => {
  await server?.stop('SIGKILL');
  server = undefined;
});

afterAll(async () => {
  await fake.close();
  workspace.remove();
});

async function messagesOf(url: string, sessionId: string): Promise<Json[]> {
  return (await http(url, 'GET', `/sessions/${sessionId}/messages?limit=500&order=asc`)).json?.[
    'messages'
  ] as Json[];
}

it('survives kill -9 mid-run: interrupted run, checkpointed history, next message completes', async () => {
  server = await startAgentServer(fake, workspace.dir, INTERRUPT);
  const sessionId = await createSession(server.url, { title: 'crash' });

  // A completed tool round (checkpointed), then a model call that streams two words and hangs.
  fake.enqueue(
    { toolCalls: [{ id: 'call_1', name: 'write_file', args: { path: 'x.txt', content: 'X' } }] },
    { text: ['Half ', 'an ', 'answer'], hangAfterChunks: 2 },
  );
  const read = await readSse(
    await postMessage(server.url, sessionId, { content: 'Write x, then explain' }),
    (_frame, frames) => eventsOf(frames).filter((e) => e.event === 'token').length === 2,
  );
  const seen = eventsOf(read.frames);
  expect(seen.map((e) => e.event)).toEqual([
    'status',
    'tool_call',
    'tool_result',
    'token',
    'token',
  ]);
  const runId = seen[0]?.id.split(':')[0] ?? '';

  expect(await server.stop('SIGKILL')).toBeNull();
  expect(server.child.signalCode).toBe('SIGKILL');

  server = await startAgentServer(fake, workspace.dir, INTERRUPT);
  const recovered = server.stdout.find((line) =>
    line.includes('left active by a previous process'),
  );
  expect(JSON.parse(recovered ?? '{}')).toMatchObject({ interruptedRuns: [runId] });

  const run = await http(server.url, 'GET', `/sessions/${sessionId}/runs/${runId}`);
  expect(run.json).toMatchObject({ status: 'interrupted', error: { code: 'UNAVAILABLE' } });
  expect(run.json?.['finished_at']).toEqual(expect.any(String));

  // The history: the user message and the checkpointed tool round; the unfinished text is lost.
  const history = await messagesOf(server.url, sessionId);
  expect(history.map((m) => [m['role'], m['content']])).toEqual([
    ['user', 'Write x, then explain'],
    ['assistant', ''],
    ['tool', expect.stringContaining('x.txt') as string],
  ]);

  // A client resuming the dead stream gets the run's terminal event instead of hanging.
  const resumed = await fetch(`${server.url}/sessions/${sessionId}/events`, {
    headers: { 'Last-Event-ID': seen.at(-1)?.id ?? '' },
  });
  const tail = eventsOf((await readSse(resumed)).frames);
  expect(tail[0]?.event).toBe('reconnected');
  expect(tail.at(-1)).toMatchObject({ event: 'error', data: { code: 'UNAVAILABLE' } });

  // The session takes a new message; the model receives exactly the projected history.
  fake.enqueue({ text: 'Recovered and done.' });
  const index = fake.requests.length;
  const next = eventsOf(
    (await readSse(await postMessage(server.url, sessionId, { content: 'Continue' }))).frames,
  );
  expect(next.at(-1)).toMatchObject({
    event: 'done',
    data: { assistant_data: { content: 'Recovered and done.' } },
  });
  const sent = (fake.requests[index]?.body.messages ?? []).slice(1).map((m) => m.role);
  expect(sent).toEqual([...history.map((m) => m['role']), 'user']);
  const after = await messagesOf(server.url, sessionId);
  expect(after.slice(0, history.length)).toEqual(history);
  expect(after.slice(history.length).map((m) => [m['role'], m['content']])).toEqual([
    ['user', 'Continue'],
    ['assistant', 'Recovered and done.'],
  ]);
  const runs = (await http(server.url, 'GET', `/sessions/${sessionId}/runs`)).json?.[
    'runs'
  ] as Json[];
  expect(runs.map((r) => r['status'])).toEqual(['completed', 'interrupted']);
});

it('on SIGTERM gives a running run the grace period, then interrupts it with its terminal event', async () => {
  server = await startAgentServer(fake, workspace.dir, {
    ...INTERRUPT,
    COGNITION_SHUTDOWN_GRACE_SECONDS: '0.5',
  });
  const sessionId = await createSession(server.url, { title: 'drain' });
  fake.enqueue({ text: ['Never ', 'finishing'], hangAfterChunks: 1 });
  const res = await postMessage(server.url, sessionId, { content: 'Take your time' });
  const reading = readSse(res);
  await new Promise((resolve) => setTimeout(resolve, 300));
  server.child.kill('SIGTERM');
  const events = eventsOf((await reading).frames);
  expect(events.at(-1)).toMatchObject({ event: 'error', data: { code: 'UNAVAILABLE' } });
  // The run had to be cut: exit 1, as for requests cut at the end of the grace period.
  expect(await server.exited).toBe(1);
  const stopped = server.stdout.findIndex((line) => line.includes('Cognition stopped'));
  const cut = server.stdout.findIndex((line) => line.includes('interrupting remaining runs'));
  expect(cut).toBeGreaterThan(-1);
  expect(stopped).toBeGreaterThan(cut);

  server = await startAgentServer(fake, workspace.dir, INTERRUPT);
  const runs = (await http(server.url, 'GET', `/sessions/${sessionId}/runs`)).json?.[
    'runs'
  ] as Json[];
  expect(runs[0]).toMatchObject({ status: 'interrupted' });
  const recovered = server.stdout.find((line) =>
    line.includes('left active by a previous process'),
  );
  expect(JSON.parse(recovered ?? '{}')).toMatchObject({ interruptedRuns: [] });
});
