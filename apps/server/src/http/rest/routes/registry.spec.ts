import request from 'supertest';
import type { TestApp } from '../../../testing/test-app';
import { createTestApp } from '../../../testing/test-app';

type Json = Record<string, unknown>;

const ADMIN_KEY = 'admin-key-0123456789abcdef';
const USER_KEY = 'user-key-0123456789abcdefg';
const SECRET = 'sk-provider-secret-7f3a9c1e';

let t: TestApp;

beforeAll(async () => {
  t = await createTestApp({
    apiKeys: [
      { id: 'key_user', key: USER_KEY },
      { id: 'key_admin', key: ADMIN_KEY, admin: true },
    ],
  });
});

afterAll(async () => {
  await t.close();
});

const as = (key: string) => ({
  get: (path: string) => request(t.app).get(path).set('Authorization', `Bearer ${key}`),
  post: (path: string) => request(t.app).post(path).set('Authorization', `Bearer ${key}`),
  put: (path: string) => request(t.app).put(path).set('Authorization', `Bearer ${key}`),
  delete: (path: string) => request(t.app).delete(path).set('Authorization', `Bearer ${key}`),
});
const admin = as(ADMIN_KEY);
const user = as(USER_KEY);

const AGENT = {
  name: 'rest-reviewer',
  description: 'Reviews code',
  tools: ['read_file'],
  system_prompt: 'You review.',
};

const paths = (body: unknown) =>
  ((body as Json)['errors'] as { path: string }[]).map((e) => e.path);

describe('REST /agents', () => {
  it('creates (201), reads, replaces (200, 409 when stale), deletes (204) with an admin key', async () => {
    const created = await admin.post('/agents').send(AGENT);
    expect(created.status).toBe(201);
    expect(created.body).toMatchObject({ name: 'rest-reviewer', source: 'api', version: 1 });
    expect((await user.get('/agents/rest-reviewer')).body).toEqual(created.body);
    const list = (await user.get('/agents')).body as { agents: Json[] };
    expect(list.agents.map((a) => [a['name'], a['source']])).toContainEqual(['default', 'builtin']);
    expect(list.agents.map((a) => a['name'])).toContain('rest-reviewer');

    const { name: _name, ...definition } = AGENT;
    const put = await admin
      .put('/agents/rest-reviewer')
      .send({ ...definition, system_prompt: 'Two.', expected_version: 1 });
    expect(put.status).toBe(200);
    expect(put.body).toMatchObject({ version: 2, system_prompt: 'Two.' });
    const stale = await admin
      .put('/agents/rest-reviewer')
      .send({ ...definition, expected_version: 1 });
    expect(stale.status).toBe(409);
    expect((stale.body as Json)['code']).toBe('VERSION_CONFLICT');
    expect((await admin.delete('/agents/rest-reviewer?expected_version=1')).status).toBe(409);
    expect((await admin.delete('/agents/rest-reviewer?expected_version=2')).status).toBe(204);
    expect((await user.get('/agents/rest-reviewer')).status).toBe(404);
    // PUT creates too.
    expect((await admin.put('/agents/rest-created').send(definition)).status).toBe(201);
  });

  it('answers 422 naming the body field: unknown tool, bad model, bad temperature, a renaming PUT', async () => {
    const cases: [Json, string][] = [
      [{ ...AGENT, tools: ['read_file', 'teleport'] }, 'body.tools.1'],
      [{ ...AGENT, model: 'no-such-model' }, 'body.model'],
      [{ ...AGENT, temperature: 3 }, 'body.temperature'],
      [{ ...AGENT, interrupt_on: { deploy: true } }, 'body.interrupt_on.deploy'],
    ];
    for (const [body, path] of cases) {
      const res = await admin.post('/agents').send(body);
      expect(res.status).toBe(422);
      expect(paths(res.body)).toEqual([path]);
    }
    const renaming = await admin.put('/agents/one-name').send({ ...AGENT, name: 'other-name' });
    expect(renaming.status).toBe(422);
    expect(paths(renaming.body)).toEqual(['body.name']);
  });

  it('refuses changes with an ordinary key (403) and to built-in or file agents (409)', async () => {
    const refused = await user.post('/agents').send({ ...AGENT, name: 'not-allowed' });
    expect(refused.status).toBe(403);
    expect((refused.body as Json)['detail']).toMatch(/admin API key/);
    expect((await user.delete('/agents/default')).status).toBe(403);
    const builtin = await admin.put('/agents/readonly').send({ ...AGENT, name: undefined });
    expect(builtin.status).toBe(409);
    expect((builtin.body as Json)['detail']).toMatch(/read-only/);
    expect((await admin.delete('/agents/auditor')).status).toBe(409);
    expect((await admin.post('/agents').send({ ...AGENT, name: 'auditor' })).status).toBe(409);
    expect((await request(t.app).get('/agents')).status).toBe(401);
  });
});

describe('REST /providers', () => {
  const PROVIDER = {
    id: 'rest-local',
    kind: 'openai_compatible',
    model: 'rest-model',
    base_url: 'http://127.0.0.1:9/v1',
    api_key: SECRET,
  };

  it('never returns the key, keeps it when a PUT leaves it out, and never logs it', async () => {
    const created = await admin.post('/providers').send(PROVIDER);
    expect(created.status).toBe(201);
    expect(created.body).toMatchObject({ id: 'rest-local', api_key_set: true, source: 'api' });
    const { api_key: _key, ...withoutKey } = PROVIDER;
    const put = await admin
      .put('/providers/rest-local')
      .send({ ...withoutKey, priority: 5, expected_version: 1 });
    expect(put.status).toBe(200);
    expect(put.body).toMatchObject({ version: 2, priority: 5, api_key_set: true });
    const answers = [
      created.text,
      put.text,
      (await user.get('/providers')).text,
      (await user.get('/providers/rest-local')).text,
    ];
    for (const text of answers) expect(text).not.toContain(SECRET);
    expect(JSON.stringify(t.logs())).not.toContain(SECRET);
    expect((await admin.delete('/providers/rest-local')).status).toBe(204);
  });

  it('answers 422 naming snake_case fields, 409 for configured providers, 403 for ordinary keys', async () => {
    const bad = await admin
      .post('/providers')
      .send({ ...PROVIDER, id: 'bad', base_url: 'ftp://x' });
    expect(bad.status).toBe(422);
    expect(paths(bad.body)).toEqual(['body.base_url']);
    const noKey = await admin
      .post('/providers')
      .send({ id: 'oa', kind: 'openai', model: 'gpt-4o-mini' });
    expect(paths(noKey.body)).toEqual(['body.api_key']);
    const configured = (await user.get('/providers')).body as { providers: Json[] };
    const fixed = configured.providers[0];
    expect(fixed).toMatchObject({ source: 'file', read_only: true });
    expect((await admin.delete(`/providers/${String(fixed?.['id'])}`)).status).toBe(409);
    expect((await user.post('/providers').send(PROVIDER)).status).toBe(403);
  });
});
