import { createCognitionClient } from '@cognition/client';
import type { CognitionClient } from '@cognition/client';
import { FakeOpenAIServer, postMessage, startAgentServer } from './testing/agent-server';
import { http } from './testing/http';
import { createTestDatabase } from './testing/postgres';
import type { ServerProcess } from './testing/server-process';
import { tempWorkspace } from './testing/server-process';

/**
 * Issue 14 against the BUILT server, on SQLite and on PostgreSQL: the time-travel walk-through of
 * docs/sessions.md over REST (two turns, rewind to after the first, a different second turn, a
 * fork from the original second turn, both message lists) with a model that answers with the
 * questions it was shown; the status actions, metadata, abandoned and TTL expiry through REST
 * and the typed client.
 */
type Json = Record<string, unknown>;

describe.each(['sqlite', 'postgres'] as const)('session lifecycle end to end on %s', (backend) => {
  let fake: FakeOpenAIServer;
  let server: ServerProcess;
  let client: CognitionClient;
  let drop: (() => Promise<void>) | undefined;
  const workspace = tempWorkspace();

  beforeAll(async () => {
    fake = await FakeOpenAIServer.start({
      fallback: (request) => {
        const users = (request.body.messages ?? [])
          .filter((m) => m.role === 'user')
          .map((m) => String(m.content));
        return { text: `shown: ${users.join(' / ')}` };
      },
    });
    const env: Record<string, string> = {
      COGNITION_SESSION_ABANDON_AFTER_SECONDS: '2',
      COGNITION_SESSION_SWEEP_INTERVAL_SECONDS: '1',
    };
    if (backend === 'postgres') {
      const database = await createTestDatabase();
      drop = database.drop;
      env['COGNITION_PERSISTENCE_BACKEND'] = 'postgres';
      env['COGNITION_PERSISTENCE_URI'] = database.url;
    }
    server = await startAgentServer(fake, workspace.dir, env);
    client = createCognitionClient({ url: `${server.url}/trpc` });
  });

  afterAll(async () => {
    if (server) expect(await server.stop()).toBe(0);
    await fake.close();
    await drop?.();
    workspace.remove();
  });

  async function turn(sessionId: string, content: string): Promise<void> {
    const res = await postMessage(server.url, sessionId, { content });
    expect(res.status).toBe(200);
    expect(await res.text()).toContain('event: done');
  }

  async function messages(sessionId: string): Promise<string[][]> {
    const res = await http(server.url, 'GET', `/sessions/${sessionId}/messages?order=asc`);
    expect(res.status).toBe(200);
    return (res.json?.['messages'] as Json[]).map((m) => [String(m['role']), String(m['content'])]);
  }

  it('two turns, rewind to after the first, a different second turn, a fork from the original second turn', async () => {
    const created = await http(server.url, 'POST', '/sessions', { body: { title: 'travel' } });
    const id = String(created.json?.['id']);
    expect(String(created.json?.['workspace_path'])).toMatch(new RegExp(`/${id}$`));
    await turn(id, 'What is 2+2?');
    await turn(id, 'And times 3?');
    const history = await http(server.url, 'GET', `/sessions/${id}/history`);
    const originalSecond = String((history.json?.['checkpoints'] as Json[])[0]?.['checkpoint_id']);
    // REST lists newest first by default (the original API's order).
    const newest = await http(server.url, 'GET', `/sessions/${id}/messages?limit=1`);
    expect((newest.json?.['messages'] as Json[])[0]?.['content']).toBe(
      'shown: What is 2+2? / And times 3?',
    );
    const firstAnswer = (await http(server.url, 'GET', `/sessions/${id}/messages?order=asc`))
      .json?.['messages'] as Json[];
    const rewound = await http(server.url, 'POST', `/sessions/${id}/rewind`, {
      body: { message_id: firstAnswer[1]?.['id'], expected_version: 1 },
    });
    expect(rewound.status).toBe(200);
    expect(rewound.json).toMatchObject({ version: 2, message_count: 2 });
    await turn(id, 'And minus 1?');
    const fork = await http(server.url, 'POST', `/sessions/${id}/fork`, {
      body: { checkpoint_id: originalSecond, title: 'original' },
    });
    expect(fork.status).toBe(201);
    const forkId = String(fork.json?.['id']);
    expect(fork.json).toMatchObject({ parent_id: id, title: 'original', message_count: 4 });
    expect(await messages(id)).toEqual([
      ['user', 'What is 2+2?'],
      ['assistant', 'shown: What is 2+2?'],
      ['user', 'And minus 1?'],
      ['assistant', 'shown: What is 2+2? / And minus 1?'],
    ]);
    expect(await messages(forkId)).toEqual([
      ['user', 'What is 2+2?'],
      ['assistant', 'shown: What is 2+2?'],
      ['user', 'And times 3?'],
      ['assistant', 'shown: What is 2+2? / And times 3?'],
    ]);
    // The fork continues on its own thread, from its own history.
    await turn(forkId, 'And plus 5?');
    expect((await messages(forkId)).at(-1)).toEqual([
      'assistant',
      'shown: What is 2+2? / And times 3? / And plus 5?',
    ]);
    // The typed client sees the same.
    const viaClient = await client.messages.list.query({ sessionId: forkId, order: 'desc' });
    expect(viaClient.messages[0]?.content).toBe('shown: What is 2+2? / And times 3? / And plus 5?');
    const log = await client.sessions.activity.query({ id });
    expect(log.entries.map((e) => `${e.type}:${e.action ?? ''}`)).toContain('session.saved:rewind');
  });

  it('status actions, metadata, system prompt and clear through the typed client', async () => {
    const session = await client.sessions.create.mutate({ title: 'actions', metadata: { a: '1' } });
    const suspended = await client.sessions.suspend.mutate({ id: session.id, expectedVersion: 1 });
    expect(suspended.status).toBe('suspended');
    const refused = await postMessage(server.url, session.id, { content: 'hi' });
    expect(refused.status).toBe(409);
    await client.sessions.resume.mutate({ id: session.id });
    const prompted = await client.sessions.update.mutate({
      id: session.id,
      systemPrompt: 'You are terse.',
      task: 'Count',
    });
    expect(prompted).toMatchObject({ systemPrompt: 'You are terse.', task: 'Count' });
    await turn(session.id, 'one');
    const system = fake.requests.at(-1)?.body.messages?.[0];
    expect(system?.role).toBe('system');
    expect(String(system?.content)).toContain('You are terse.');
    expect(String(system?.content)).toContain('<task>\nCount\n</task>');
    await client.sessions.clear.mutate({ id: session.id });
    await turn(session.id, 'two');
    expect(
      (fake.requests.at(-1)?.body.messages ?? [])
        .filter((m) => m.role === 'user')
        .map((m) => m.content),
    ).toEqual(['two']);
    const tagged = await client.sessions.setMetadata.mutate({
      id: session.id,
      key: 'b',
      value: '2',
    });
    expect(tagged.metadata).toEqual({ a: '1', b: '2' });
    const completed = await client.sessions.complete.mutate({ id: session.id });
    expect(completed.endedAt).toBeInstanceOf(Date);
    const again = await http(server.url, 'POST', `/sessions/${session.id}/resume`);
    expect(again).toMatchObject({ status: 409, json: { code: 'CONFLICT' } });
    expect((await messages(session.id)).length).toBe(4);
  });

  it('reads an idle session as abandoned and deletes an expired one (REST and client)', async () => {
    const idle = await client.sessions.create.mutate({ title: 'idle' });
    const expiring = await http(server.url, 'POST', '/sessions', {
      body: { title: 'expiring', expires_at: new Date(Date.now() + 1500).toISOString() },
    });
    const expiringId = String(expiring.json?.['id']);
    expect(expiring.status).toBe(201);
    await new Promise((resolve) => setTimeout(resolve, 3000));
    expect((await client.sessions.get.query({ id: idle.id })).status).toBe('abandoned');
    const abandoned = await http(server.url, 'GET', '/sessions?status=abandoned&limit=500');
    expect((abandoned.json?.['sessions'] as Json[]).map((s) => s['id'])).toContain(idle.id);
    expect((await http(server.url, 'GET', `/sessions/${expiringId}`)).status).toBe(404);
    // The sweep (every second here) deletes it for good; the log line says so.
    const until = Date.now() + 10_000;
    while (!server.stdout.some((line) => line.includes('expired session'))) {
      if (Date.now() > until) throw new Error('no sweep logged');
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
  });
});
