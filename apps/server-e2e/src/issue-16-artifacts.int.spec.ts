import { createCognitionClient } from '@cognition/client';
import { FakeOpenAIServer, postMessage, startAgentServer } from './testing/agent-server';
import { http } from './testing/http';
import { createTestDatabase } from './testing/postgres';
import type { ServerProcess } from './testing/server-process';
import { tempWorkspace } from './testing/server-process';

/**
 * Issue 16 against the BUILT server, on SQLite and on PostgreSQL, with scoping on (`user`): an
 * agent (fake OpenAI-compatible model) writes a public artifact in one session; an agent of
 * another session of the same scope reads it, one of another scope does not; REST and the typed
 * client see the same artifact; deleting the writer's session keeps the public artifact.
 */
type Json = Record<string, unknown>;

const scopeOf = (user: string) => ({ 'X-Cognition-Scope-User': user });

describe.each(['sqlite', 'postgres'] as const)('artifacts end to end on %s', (backend) => {
  let fake: FakeOpenAIServer;
  let server: ServerProcess;
  let drop: (() => Promise<void>) | undefined;
  const workspace = tempWorkspace();

  beforeAll(async () => {
    fake = await FakeOpenAIServer.start();
    const env: Record<string, string> = {
      COGNITION_SCOPING_ENABLED: 'true',
      COGNITION_SCOPE_KEYS: 'user',
    };
    if (backend === 'postgres') {
      const database = await createTestDatabase();
      drop = database.drop;
      env['COGNITION_PERSISTENCE_BACKEND'] = 'postgres';
      env['COGNITION_PERSISTENCE_URI'] = database.url;
    }
    server = await startAgentServer(fake, workspace.dir, env);
  });

  afterAll(async () => {
    if (server) expect(await server.stop()).toBe(0);
    await fake.close();
    await drop?.();
    workspace.remove();
  });

  /** Sends one message as `user` and returns the run's SSE text once the run ended. */
  async function turn(user: string, sessionId: string, content: string): Promise<string> {
    const res = await postMessage(server.url, sessionId, { content }, scopeOf(user));
    expect(res.status).toBe(200);
    return res.text();
  }

  async function newSession(user: string): Promise<string> {
    const res = await http(server.url, 'POST', '/sessions', { headers: scopeOf(user), body: {} });
    expect(res.status).toBe(201);
    return String(res.json?.['id']);
  }

  const toolOutputs = (sse: string) =>
    sse
      .split('\n\n')
      .filter((frame) => frame.includes('event: tool_result'))
      .map((frame) => JSON.parse(frame.split('data: ')[1] ?? '{}') as Json);

  it('an agent writes a public artifact; its scope reads it, another scope does not', async () => {
    fake.enqueue(
      {
        toolCalls: [
          {
            name: 'artifact_write',
            args: { name: 'report.md', content: '# Findings\nAll green.', visibility: 'public' },
          },
        ],
      },
      { text: 'Saved.' },
    );
    const writerSession = await newSession('alice');
    const written = await turn('alice', writerSession, 'Write the report.');
    expect(written).toContain('event: artifact');
    expect(written).toMatch(
      /"name":"report.md","artifact_type":"artifact","version":1,"action":"created"/,
    );
    expect(written).toContain('event: done');

    const readCall = {
      toolCalls: [{ name: 'artifact_read', args: { name: 'report.md' } }],
    };
    fake.enqueue(readCall, { text: 'Read.' });
    const readerSession = await newSession('alice');
    const read = await turn('alice', readerSession, 'Read the report.');
    expect(toolOutputs(read)[0]).toMatchObject({ exit_code: 0 });
    expect(String(toolOutputs(read)[0]?.['output'])).toContain('All green.');

    fake.enqueue(readCall, { text: 'Nothing.' });
    const bobSession = await newSession('bob');
    const denied = await turn('bob', bobSession, 'Read the report.');
    expect(toolOutputs(denied)[0]).toMatchObject({ exit_code: 1 });
    expect(String(toolOutputs(denied)[0]?.['output'])).not.toContain('All green.');

    const listed = await http(server.url, 'GET', '/artifacts?name=report.md', {
      headers: scopeOf('alice'),
    });
    const artifacts = listed.json?.['artifacts'] as Json[];
    expect(artifacts).toHaveLength(1);
    const id = String(artifacts[0]?.['id']);
    expect(artifacts[0]).toMatchObject({ visibility: 'public', session_id: writerSession });
    expect(
      (await http(server.url, 'GET', `/artifacts/${id}`, { headers: scopeOf('bob') })).status,
    ).toBe(404);

    const alice = createCognitionClient({ url: `${server.url}/trpc`, scopes: { user: 'alice' } });
    const viaClient = await alice.artifacts.get.query({ id });
    expect(viaClient.content).toBe('# Findings\nAll green.');
    await alice.artifacts.update.mutate({
      id,
      content: '# Findings\nStill green.',
      expectedVersion: 1,
    });
    expect((await alice.artifacts.versions.query({ id })).map((v) => v.version)).toEqual([1, 2]);

    const deleted = await http(server.url, 'DELETE', `/sessions/${writerSession}`, {
      headers: scopeOf('alice'),
    });
    expect(deleted.status).toBe(204);
    const after = await http(server.url, 'GET', `/artifacts/${id}?version=1`, {
      headers: scopeOf('alice'),
    });
    expect(after.json).toMatchObject({ version: 1, content: '# Findings\nAll green.' });
  });
});
