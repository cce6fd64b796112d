import { FakeOpenAIServer, postMessage, startAgentServer } from './testing/agent-server';
import { http } from './testing/http';
import type { ServerProcess } from './testing/server-process';
import { tempWorkspace } from './testing/server-process';

/**
 * Issue 17 (configuration registry) against the BUILT server on SQLite, with an ordinary and an
 * admin API key: a provider and an agent created over REST with the admin key serve the next
 * message of a session bound to the agent; a changed system prompt is what the next run sends;
 * an ordinary key reads but gets 403 on a change; the provider's key is used toward the model
 * but never appears in an answer or in the server's log.
 */
const ADMIN_KEY = 'e2e-admin-key-0123456789abcdef';
const USER_KEY = 'e2e-user-key-0123456789abcdefg';
const SECRET = 'sk-e2e-registry-secret-5b8d2f71';

describe('configuration registry end to end (sqlite)', () => {
  let fake: FakeOpenAIServer;
  let server: ServerProcess;
  const workspace = tempWorkspace();
  const as = (key: string) => ({ Authorization: `Bearer ${key}` });

  beforeAll(async () => {
    fake = await FakeOpenAIServer.start();
    server = await startAgentServer(fake, workspace.dir, {
      COGNITION_API_KEYS: USER_KEY,
      COGNITION_ADMIN_API_KEYS: ADMIN_KEY,
    });
  });

  afterAll(async () => {
    if (server) expect(await server.stop()).toBe(0);
    await fake.close();
    workspace.remove();
  });

  /** Sends one message with the ordinary key and returns the run's SSE text once it ended. */
  async function turn(sessionId: string, content: string): Promise<string> {
    const res = await postMessage(server.url, sessionId, { content }, as(USER_KEY));
    expect(res.status).toBe(200);
    return res.text();
  }

  it('serves an agent and provider created at run time, applies a change at the next run, keeps the key secret', async () => {
    const provider = await http(server.url, 'POST', '/providers', {
      headers: as(ADMIN_KEY),
      body: {
        id: 'registry-fake',
        kind: 'openai_compatible',
        model: 'registry-model',
        base_url: fake.baseUrl,
        api_key: SECRET,
      },
    });
    expect(provider.status).toBe(201);
    expect(provider.json).toMatchObject({ api_key_set: true, source: 'api', version: 1 });
    const agent = await http(server.url, 'POST', '/agents', {
      headers: as(ADMIN_KEY),
      body: {
        name: 'triager',
        description: 'Triages issues',
        tools: ['read_file', 'grep'],
        model: 'registry-model',
        system_prompt: 'You triage issues. First edition.',
      },
    });
    expect(agent.status).toBe(201);

    const session = await http(server.url, 'POST', '/sessions', {
      headers: as(USER_KEY),
      body: { agent_name: 'triager' },
    });
    expect(session.status).toBe(201);
    const sessionId = String(session.json?.['id']);

    fake.enqueue({ text: 'Triaged.' });
    expect(await turn(sessionId, 'Look at issue 1')).toContain('event: done');
    const first = fake.requests.at(-1);
    expect(first?.body.model).toBe('registry-model');
    expect(first?.headers.authorization).toBe(`Bearer ${SECRET}`);
    expect(JSON.stringify(first?.body.messages)).toContain('First edition.');
    expect(fake.toolNames(fake.requests.length - 1).sort()).toEqual(['grep', 'read_file']);

    const refused = await http(server.url, 'PUT', '/agents/triager', {
      headers: as(USER_KEY),
      body: { description: 'x', system_prompt: 'Hijacked.' },
    });
    expect(refused.status).toBe(403);
    expect(refused.json?.['code']).toBe('FORBIDDEN');

    const changed = await http(server.url, 'PUT', '/agents/triager', {
      headers: as(ADMIN_KEY),
      body: {
        description: 'Triages issues',
        tools: ['read_file', 'grep'],
        model: 'registry-model',
        system_prompt: 'You triage issues. Second edition.',
        expected_version: 1,
      },
    });
    expect(changed.status).toBe(200);
    expect(changed.json).toMatchObject({ version: 2 });

    fake.enqueue({ text: 'Triaged again.' });
    expect(await turn(sessionId, 'And issue 2')).toContain('event: done');
    const second = JSON.stringify(fake.requests.at(-1)?.body.messages);
    expect(second).toContain('Second edition.');
    expect(second).not.toContain('First edition.');

    const reads = [
      await http(server.url, 'GET', '/providers', { headers: as(USER_KEY) }),
      await http(server.url, 'GET', '/providers/registry-fake', { headers: as(USER_KEY) }),
    ];
    for (const read of reads) {
      expect(read.status).toBe(200);
      expect(read.text).not.toContain(SECRET);
    }
    const log = [...server.stdout, ...server.stderr].join('\n');
    // The change is recorded (an audit line naming the entry), its key is not.
    expect(log).toMatch(/Registry: provider \\"registry-fake\\" saved \(version 1\)/);
    expect(log).not.toContain(SECRET);
  });
});
