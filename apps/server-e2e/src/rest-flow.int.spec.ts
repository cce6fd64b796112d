import { createCognitionClient } from '@cognition/client';
import type { StorageBackend } from '@cognition/storage';
import { createPrismaStorage } from '@cognition/storage-prisma';
import path from 'node:path';
import { http } from './testing/http';
import { createTestDatabase } from './testing/postgres';
import type { ServerProcess } from './testing/server-process';
import { startServerProcess, tempWorkspace } from './testing/server-process';

/**
 * The README's curl session against the real, built server on each persistent backend: create,
 * list with a metadata filter, patch, read messages, delete — over raw HTTP as curl sends it, and
 * the same data through the typed client on /trpc.
 */
interface Backend {
  name: string;
  setup(): Promise<{
    env: Record<string, string>;
    storage: () => StorageBackend;
    cleanup(): Promise<void>;
  }>;
}

const backends: Backend[] = [
  {
    name: 'sqlite',
    setup() {
      const workspace = tempWorkspace();
      return Promise.resolve({
        env: { COGNITION_WORKSPACE_ROOT: workspace.dir },
        storage: () =>
          createPrismaStorage({
            provider: 'sqlite',
            path: path.join(workspace.dir, '.cognition/state.db'),
          }),
        cleanup: () => Promise.resolve(workspace.remove()),
      });
    },
  },
  {
    name: 'postgres',
    async setup() {
      const database = await createTestDatabase();
      return {
        env: { COGNITION_PERSISTENCE_BACKEND: 'postgres', COGNITION_PERSISTENCE_URI: database.url },
        storage: () =>
          createPrismaStorage({ provider: 'postgresql', url: database.url, poolSize: 2 }),
        cleanup: () => database.drop(),
      };
    },
  },
];

describe.each(backends)('the curl flow on $name', (backend) => {
  let server: ServerProcess;
  let cleanup: () => Promise<void>;
  let openStorage: () => StorageBackend;

  beforeAll(async () => {
    const setup = await backend.setup();
    cleanup = setup.cleanup;
    openStorage = setup.storage;
    // Session configs name models, which must be served by a configured provider (never called).
    server = await startServerProcess({
      ...setup.env,
      COGNITION_LLM_PROVIDER: 'openai',
      COGNITION_LLM_MODEL: 'gpt-4o-mini',
      OPENAI_API_KEY: 'sk-e2e-never-used',
    });
  });

  afterAll(async () => {
    if (server) expect(await server.stop()).toBe(0);
    await cleanup();
  });

  it('logs where it listens and which backends it uses', () => {
    const line = server.stdout.find((l) => l.includes('listening on'));
    expect(line).toBeDefined();
    const parsed = JSON.parse(line ?? '{}') as Record<string, unknown>;
    expect(parsed).toMatchObject({ url: server.url, storage: backend.name, sandbox: 'local' });
    expect(String(parsed['msg'])).toContain(`storage: ${backend.name} at`);
  });

  it('create, filter by metadata, patch, read messages, delete', async () => {
    // curl -X POST $URL/sessions -H "Content-Type: application/json" -d '{"title": "My session"}'
    const created = await http(server.url, 'POST', '/sessions', {
      body: {
        title: 'PR review session',
        metadata: { workflow_id: 'pr-review', repository: 'myorg/myrepo', pr_number: '42' },
      },
    });
    expect(created.status).toBe(201);
    expect(created.headers.get('x-request-id')).toBeTruthy();
    expect(created.headers.get('x-content-type-options')).toBe('nosniff');
    const session = created.json ?? {};
    expect(session).toMatchObject({
      title: 'PR review session',
      status: 'active',
      agent_name: 'default',
      version: 1,
    });
    const id = String(session['id']);

    // The original docs' form: no Content-Type header at all.
    const other = await http(server.url, 'POST', '/sessions', {
      rawBody:
        '{"title": "Code review", "agent_name": "readonly", "metadata": {"repository": "other/repo"}}',
      headers: { 'Content-Type': 'application/x-www-form-urlencoded' },
    });
    expect(other.status).toBe(201);

    // curl "$URL/sessions?metadata.repository=myorg/myrepo&metadata.pr_number=42"
    const filtered = await http(
      server.url,
      'GET',
      '/sessions?metadata.repository=myorg/myrepo&metadata.pr_number=42',
    );
    expect(filtered.status).toBe(200);
    expect(filtered.json?.['total']).toBe(1);
    expect((filtered.json?.['sessions'] as { id: string }[]).map((s) => s.id)).toEqual([id]);
    expect((await http(server.url, 'GET', '/sessions')).json?.['total']).toBe(2);

    // curl -X PATCH $URL/sessions/$ID -d '{"config": {"model": "gpt-4o-mini", "temperature": 0.2}}'
    const patched = await http(server.url, 'PATCH', `/sessions/${id}`, {
      body: { config: { model: 'gpt-4o-mini', temperature: 0.2 }, expected_version: 1 },
    });
    expect(patched.status).toBe(200);
    expect(patched.json).toMatchObject({
      config: { model: 'gpt-4o-mini', temperature: 0.2 },
      version: 2,
    });
    const stale = await http(server.url, 'PATCH', `/sessions/${id}`, {
      body: { title: 'late', expected_version: 1 },
    });
    expect(stale.status).toBe(409);
    expect(stale.json).toMatchObject({ code: 'VERSION_CONFLICT' });

    // Messages arrive with agent runs; seed two through the storage the server uses.
    const storage = openStorage();
    await storage.initialize();
    try {
      await storage.messages.create({ sessionId: id, role: 'user', content: 'List the files. 📁' });
      await storage.messages.create({
        sessionId: id,
        role: 'assistant',
        content: 'README.md',
        modelUsed: 'gpt-4o-mini',
      });
    } finally {
      await storage.close();
    }

    // curl "$URL/sessions/$ID/messages?limit=1&order=asc"
    const page = await http(server.url, 'GET', `/sessions/${id}/messages?limit=1&order=asc`);
    expect(page.status).toBe(200);
    expect(page.json).toMatchObject({ total: 2, has_more: true });
    const first = (page.json?.['messages'] as Record<string, unknown>[])[0];
    expect(first).toMatchObject({
      session_id: id,
      role: 'user',
      content: 'List the files. 📁',
      tool_calls: [],
    });
    const one = await http(server.url, 'GET', `/sessions/${id}/messages/${String(first?.['id'])}`);
    expect(one.json).toEqual(first);
    expect((await http(server.url, 'GET', `/sessions/${id}`)).json?.['message_count']).toBe(2);

    // curl -X DELETE $URL/sessions/$ID
    const deleted = await http(server.url, 'DELETE', `/sessions/${id}`);
    expect(deleted.status).toBe(204);
    const gone = await http(server.url, 'GET', `/sessions/${id}`);
    expect(gone.status).toBe(404);
    expect(gone.json).toEqual({ detail: `Session not found: ${id}`, code: 'SESSION_NOT_FOUND' });
    expect((await http(server.url, 'GET', `/sessions/${id}/messages`)).status).toBe(404);
  });

  it('serves the same sessions to the typed client on /trpc', async () => {
    const client = createCognitionClient({ url: `${server.url}/trpc` });
    const created = await client.sessions.create.mutate({
      title: 'from the client',
      metadata: { via: 'trpc' },
    });
    expect(created.createdAt).toBeInstanceOf(Date);
    const rest = await http(server.url, 'GET', `/sessions/${created.id}`);
    expect(rest.json).toMatchObject({
      id: created.id,
      title: 'from the client',
      metadata: { via: 'trpc' },
    });
    const listed = await client.sessions.list.query({ metadata: { via: 'trpc' } });
    expect(listed.sessions.map((s) => s.id)).toEqual([created.id]);
    const health = await http(server.url, 'GET', '/health');
    expect(health.json).toMatchObject({
      status: 'healthy',
      storage: { backend: backend.name, ok: true },
    });
    expect((await http(server.url, 'GET', '/ready')).json).toEqual({ ready: true });
  });
});
