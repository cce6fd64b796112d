import request from 'supertest';
import type { TestApp } from '../../../testing/test-app';
import { createTestApp } from '../../../testing/test-app';

type Json = Record<string, unknown>;

let t: TestApp;

beforeAll(async () => {
  t = await createTestApp({ scoping: { enabled: true, keys: ['user'] } });
});

afterAll(async () => {
  await t.close();
});

const as = (user: string) => ({
  get: (path: string) => request(t.app).get(path).set('X-Cognition-Scope-User', user),
  post: (path: string) => request(t.app).post(path).set('X-Cognition-Scope-User', user),
  put: (path: string) => request(t.app).put(path).set('X-Cognition-Scope-User', user),
  delete: (path: string) => request(t.app).delete(path).set('X-Cognition-Scope-User', user),
});
const alice = as('alice');
const bob = as('bob');

async function newSession(user = alice): Promise<string> {
  const res = await user.post('/sessions').send({});
  expect(res.status).toBe(201);
  return String((res.body as Json)['id']);
}

describe('REST /artifacts', () => {
  it('creates (201), reads, versions (PUT, ?version=N, /versions), lists and deletes (204)', async () => {
    const sessionId = await newSession();
    const created = await alice.post('/artifacts').send({
      name: 'plan.md',
      content: '# v1',
      session_id: sessionId,
      content_type: 'text/markdown',
    });
    expect(created.status).toBe(201);
    const a = created.body as Json;
    expect(a).toMatchObject({
      name: 'plan.md',
      type: 'artifact',
      visibility: 'private',
      version: 1,
      session_id: sessionId,
      scopes: { user: 'alice' },
      created_by: 'api',
      content: '# v1',
      content_type: 'text/markdown',
      size: 4,
    });
    const id = String(a['id']);
    const put = await alice.put(`/artifacts/${id}`).send({ content: '# v2', expected_version: 1 });
    expect(put.status).toBe(200);
    expect(put.body).toMatchObject({ version: 2 });
    expect(put.body).not.toHaveProperty('content');
    expect((await alice.get(`/artifacts/${id}?version=1`)).body).toMatchObject({
      version: 1,
      content: '# v1',
    });
    expect((await alice.get(`/artifacts/${id}`)).body).toMatchObject({ content: '# v2' });
    const versions = await alice.get(`/artifacts/${id}/versions`);
    expect((versions.body as { versions: Json[] }).versions.map((v) => v['version'])).toEqual([
      1, 2,
    ]);
    const bySession = await alice.get(`/sessions/${sessionId}/artifacts`);
    expect(bySession.body).toMatchObject({ total: 1, artifacts: [{ id }] });
    expect((await alice.get('/artifacts?type=artifact&limit=1')).body).toMatchObject({ total: 1 });
    expect((await alice.delete(`/artifacts/${id}`)).status).toBe(204);
    expect((await alice.get(`/artifacts/${id}`)).status).toBe(404);
  });

  it('filters by metadata.<key> and rejects a repeated predicate', async () => {
    await alice
      .post('/artifacts')
      .send({ name: 'tagged', visibility: 'public', content: 'x', metadata: { team: 'red' } });
    const page = await alice.get('/artifacts?metadata.team=red');
    expect((page.body as { artifacts: Json[] }).artifacts.map((a) => a['name'])).toEqual([
      'tagged',
    ]);
    const repeated = await alice.get('/artifacts?metadata.team=red&metadata.team=blue');
    expect(repeated.status).toBe(422);
    expect(repeated.body).toMatchObject({ errors: [{ path: 'query.metadata.team' }] });
  });

  it("answers 404 for another scope's artifact on every route", async () => {
    const res = await alice
      .post('/artifacts')
      .send({ name: 'mine', visibility: 'public', content: 'x' });
    const id = String((res.body as Json)['id']);
    for (const call of [
      bob.get(`/artifacts/${id}`),
      bob.get(`/artifacts/${id}/versions`),
      bob.put(`/artifacts/${id}`).send({ content: 'y' }),
      bob.delete(`/artifacts/${id}`),
    ]) {
      const answer = await call;
      expect(answer.status).toBe(404);
      expect(answer.body).toMatchObject({ code: 'NOT_FOUND' });
    }
    expect((await bob.get('/artifacts?name=mine')).body).toMatchObject({ total: 0 });
    const sessionId = await newSession();
    expect((await bob.get(`/sessions/${sessionId}/artifacts`)).status).toBe(404);
  });

  it('answers 409 for a taken name and a stale expected_version', async () => {
    const first = await alice
      .post('/artifacts')
      .send({ name: 'dup', visibility: 'public', content: 'x' });
    const again = await alice
      .post('/artifacts')
      .send({ name: 'dup', visibility: 'public', content: 'y' });
    expect(again.status).toBe(409);
    const stale = await alice
      .put(`/artifacts/${String((first.body as Json)['id'])}`)
      .send({ content: 'z', expected_version: 3 });
    expect(stale.status).toBe(409);
    expect(stale.body).toMatchObject({ code: 'VERSION_CONFLICT' });
  });

  it('answers 413 naming body.content above the artifact limit, past the general body limit', async () => {
    const big = await alice
      .post('/artifacts')
      .send({ name: 'big', visibility: 'public', content: 'x'.repeat(10 * 1024 * 1024 + 1) });
    expect(big.status).toBe(413);
    expect(big.body).toMatchObject({
      code: 'PAYLOAD_TOO_LARGE',
      errors: [{ path: 'body.content' }],
    });
    // 100 KiB: above this app's 64 KiB COGNITION_MAX_BODY_BYTES, accepted on artifact routes.
    const fits = await alice
      .post('/artifacts')
      .send({ name: 'fits', visibility: 'public', content: 'x'.repeat(100 * 1024) });
    expect(fits.status).toBe(201);
  });

  it.each([
    [
      'POST without a name',
      'post',
      '/artifacts',
      { content: 'x', visibility: 'public' },
      'body.name',
    ],
    [
      'POST with an unknown field',
      'post',
      '/artifacts',
      { name: 'n', content: 'x', scopes: {} },
      'body',
    ],
    [
      'POST private without a session',
      'post',
      '/artifacts',
      { name: 'n', content: 'x' },
      'body.session_id',
    ],
    [
      'POST run without a run',
      'post',
      '/artifacts',
      { name: 'n', content: 'x', visibility: 'run', session_id: 's' },
      'body.run_id',
    ],
    [
      'POST with bad base64',
      'post',
      '/artifacts',
      { name: 'n', content: '@@', encoding: 'base64', visibility: 'public' },
      'body.content',
    ],
    [
      'POST with a bad type',
      'post',
      '/artifacts',
      { name: 'n', content: 'x', type: 'blob', visibility: 'public' },
      'body.type',
    ],
    [
      'PUT with a bad expected_version',
      'put',
      '/artifacts/a1',
      { expected_version: 0 },
      'body.expected_version',
    ],
    [
      'PUT with a bad content_type',
      'put',
      '/artifacts/a1',
      { content: 'x', content_type: 'nope' },
      'body.content_type',
    ],
    ['GET with version=0', 'get', '/artifacts/a1?version=0', undefined, 'query.version'],
    ['GET list with limit=0', 'get', '/artifacts?limit=0', undefined, 'query.limit'],
    [
      'GET list with a bad visibility',
      'get',
      '/artifacts?visibility=secret',
      undefined,
      'query.visibility',
    ],
    [
      'GET session list with a bad type',
      'get',
      '/sessions/s1/artifacts?type=x',
      undefined,
      'query.type',
    ],
  ] as const)('%s: 422 naming the field', async (_what, method, path, body, field) => {
    const call = alice[method](path);
    const res = body === undefined ? await call : await call.send(body);
    expect(res.status).toBe(422);
    const paths = ((res.body as { errors?: { path: string }[] }).errors ?? []).map((e) => e.path);
    expect(paths.some((p) => p === field || p.startsWith(`${field}.`))).toBe(true);
  });
});
