import request from 'supertest';
import superjson from 'superjson';
import { SECURITY_HEADERS } from './app';
import { apiKeyFingerprint } from '../config';
import type { TestApp } from '../testing/test-app';
import { createTestApp } from '../testing/test-app';

/** The parsed JSON body of a response, for field access in expectations. */
function body(res: request.Response): Record<string, unknown> {
  return res.body as Record<string, unknown>;
}

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

function expectSecurityHeaders(res: request.Response): void {
  for (const [name, value] of Object.entries(SECURITY_HEADERS)) {
    expect(res.headers[name.toLowerCase()]).toBe(value);
  }
}

describe('HTTP plumbing', () => {
  let t: TestApp;
  beforeEach(async () => {
    t = await createTestApp({
      corsOrigins: ['https://app.example.com'],
      scoping: { enabled: true, keys: ['user'] },
    });
  });
  afterEach(() => t.close());

  it('puts the security headers on every response: success, 404, 413, 422, error, preflight', async () => {
    const responses = await Promise.all([
      request(t.app).get('/health'),
      request(t.app).get('/nope'),
      request(t.app).get('/sessions'),
      request(t.app).post('/sessions').set('X-Cognition-Scope-User', 'a').send({ titel: 'x' }),
      request(t.app)
        .post('/sessions')
        .set('X-Cognition-Scope-User', 'a')
        .set('Content-Type', 'application/json')
        .send(JSON.stringify({ title: 'x'.repeat(70 * 1024) })),
      request(t.app)
        .options('/sessions')
        .set('Origin', 'https://app.example.com')
        .set('Access-Control-Request-Method', 'POST'),
    ]);
    expect(responses.map((r) => r.status)).toEqual([200, 404, 403, 422, 413, 204]);
    responses.forEach(expectSecurityHeaders);
  });

  it('generates a request id, or echoes a well-formed incoming one, on every line of the request', async () => {
    const generated = await request(t.app).get('/health');
    expect(generated.headers['x-request-id']).toMatch(UUID);

    const echoed = await request(t.app).get('/sessions').set('X-Request-Id', 'trace-abc.123');
    expect(echoed.headers['x-request-id']).toBe('trace-abc.123');
    const lines = t.logs().filter((line) => line['requestId'] === 'trace-abc.123');
    expect(lines.length).toBeGreaterThan(0);
    expect(lines.every((line) => line['service'] === 'cognition')).toBe(true);

    const unsafe = await request(t.app).get('/health').set('X-Request-Id', 'bad id\twith spaces');
    expect(unsafe.headers['x-request-id']).toMatch(UUID);
  });

  it('answers CORS preflights for configured origins with the scope, auth and Last-Event-ID headers', async () => {
    const res = await request(t.app)
      .options('/sessions')
      .set('Origin', 'https://app.example.com')
      .set('Access-Control-Request-Method', 'POST')
      .set('Access-Control-Request-Headers', 'authorization,x-cognition-scope-user,last-event-id');
    expect(res.status).toBe(204);
    expect(res.headers['access-control-allow-origin']).toBe('https://app.example.com');
    const allowed = String(res.headers['access-control-allow-headers']).toLowerCase().split(',');
    expect(allowed).toEqual(
      expect.arrayContaining(['authorization', 'last-event-id', 'x-cognition-scope-user']),
    );

    const other = await request(t.app).get('/health').set('Origin', 'https://evil.example.com');
    expect(other.headers['access-control-allow-origin']).toBeUndefined();
  });

  it('sends no CORS headers when no origin is configured', async () => {
    const plain = await createTestApp();
    try {
      const res = await request(plain.app).get('/health').set('Origin', 'https://app.example.com');
      expect(res.headers['access-control-allow-origin']).toBeUndefined();
    } finally {
      await plain.close();
    }
  });

  it('rejects an oversized body with 413 PAYLOAD_TOO_LARGE on REST and on /trpc', async () => {
    const big = JSON.stringify({ title: 'x'.repeat(70 * 1024) });
    const rest = await request(t.app)
      .post('/sessions')
      .set('X-Cognition-Scope-User', 'a')
      .set('Content-Type', 'application/json')
      .send(big);
    expect(rest.status).toBe(413);
    expect(rest.body).toEqual({
      detail: expect.stringContaining('65536') as string,
      code: 'PAYLOAD_TOO_LARGE',
    });

    const trpc = await request(t.app)
      .post('/trpc/sessions.create')
      .set('X-Cognition-Scope-User', 'a')
      .set('Content-Type', 'application/json')
      .send(JSON.stringify({ json: { title: 'x'.repeat(70 * 1024) } }));
    expect(trpc.status).toBe(413);
  });

  it('answers malformed JSON with 400 and a clear detail, never 500', async () => {
    for (const body of ['{"title": ', '{title: 1}', '"just a string"', 'nul']) {
      const res = await request(t.app)
        .post('/sessions')
        .set('X-Cognition-Scope-User', 'a')
        .set('Content-Type', 'application/json')
        .send(body);
      expect(res.status).toBe(400);
      expect(res.body).toEqual({
        detail: expect.stringMatching(/^Malformed JSON body: /) as string,
        code: 'VALIDATION_ERROR',
      });
    }
    const array = await request(t.app)
      .post('/sessions')
      .set('X-Cognition-Scope-User', 'a')
      .set('Content-Type', 'application/json')
      .send('[]');
    expect(array.status).toBe(422);
    expect((await t.storage.sessions.list({}, {})).total).toBe(0);
  });

  it('answers an unknown path with a JSON 404', async () => {
    const res = await request(t.app).delete('/sessions');
    expect(res.status).toBe(404);
    expect(res.body).toEqual({ detail: 'Not found: DELETE /sessions', code: 'NOT_FOUND' });
  });

  it('reports not-ready while shutting down', async () => {
    expect((await request(t.app).get('/ready')).status).toBe(200);
    t.state.shuttingDown = true;
    const res = await request(t.app).get('/ready');
    expect(res.status).toBe(503);
    expect(res.body).toEqual({ ready: false });
    expect(res.headers['connection']).toBe('close');
  });
});

describe('REST sessions and messages', () => {
  let t: TestApp;
  beforeEach(async () => {
    t = await createTestApp();
  });
  afterEach(() => t.close());

  async function createSession(body: object = {}): Promise<Record<string, unknown>> {
    const res = await request(t.app).post('/sessions').send(body);
    expect(res.status).toBe(201);
    return res.body as Record<string, unknown>;
  }

  it('creates a session in snake_case, keeping user map keys as given', async () => {
    const res = await request(t.app)
      .post('/sessions')
      .send({
        title: 'PR review',
        agent_name: 'readonly',
        metadata: { repoName: 'myorg/myrepo', pr_number: '42' },
        config: { model: 'gpt-4o-mini', max_tokens: 100, provider_id: 'openai' },
      });
    expect(res.status).toBe(201);
    expect(res.body).toEqual({
      id: expect.any(String) as string,
      thread_id: expect.any(String) as string,
      title: 'PR review',
      status: 'active',
      agent_name: 'readonly',
      config: { model: 'gpt-4o-mini', max_tokens: 100, provider_id: 'openai' },
      scopes: {},
      metadata: { repoName: 'myorg/myrepo', pr_number: '42' },
      message_count: 0,
      version: 1,
      parent_id: null,
      // The absolute path of the session's workspace (the sandbox root), as the original gives.
      workspace_path: expect.stringMatching(/^\/.+\/[0-9a-f-]{36}$/) as string,
      system_prompt: null,
      task: null,
      ended_at: null,
      last_activity_at: expect.stringMatching(/^\d{4}-\d\d-\d\dT/) as string,
      expires_at: null,
      checkpoint_retention: null,
      created_at: expect.stringMatching(/^\d{4}-\d\d-\d\dT/) as string,
      updated_at: expect.stringMatching(/^\d{4}-\d\d-\d\dT/) as string,
      usage: {
        tokens_in: 0,
        tokens_out: 0,
        estimated_tokens_in: 0,
        estimated_tokens_out: 0,
        cost_usd: 0,
        cost_complete: true,
        runs: 0,
        error_count: 0,
        aborted_count: 0,
        last_model: null,
        last_provider: null,
        started_at: null,
        last_activity_at: null,
        ended_at: null,
      },
    });
    expect(String(body(res).workspace_path).endsWith(`/${String(body(res).id)}`)).toBe(true);
    const stored = await t.storage.sessions.get(String(body(res).id), {});
    expect(stored?.config).toEqual({ model: 'gpt-4o-mini', maxTokens: 100, providerId: 'openai' });
  });

  it('accepts an empty body and a JSON body sent without a JSON content type (curl -d)', async () => {
    const empty = await request(t.app).post('/sessions');
    expect(empty.status).toBe(201);
    expect(body(empty).agent_name).toBe('default');
    const form = await request(t.app)
      .post('/sessions')
      .set('Content-Type', 'application/x-www-form-urlencoded')
      .send('{"title": "Default Agent Session"}');
    expect(form.status).toBe(201);
    expect(body(form).title).toBe('Default Agent Session');
  });

  it('rejects unknown and mistyped fields with 422 naming them in snake_case', async () => {
    const res = await request(t.app)
      .post('/sessions')
      .send({ titel: 'x', agent_name: 5, config: { maxTokens: 3 } });
    expect(res.status).toBe(422);
    expect(body(res).code).toBe('VALIDATION_ERROR');
    const paths = (body(res).errors as { path: string }[]).map((e) => e.path).sort();
    expect(paths).toEqual(['body', 'body.agent_name', 'body.config'].sort());
    expect(JSON.stringify(body(res).errors)).toContain('titel');
    expect(JSON.stringify(body(res).errors)).toContain('maxTokens');
  });

  it('gets, lists with metadata filters, status and paging', async () => {
    const a = await createSession({
      title: 'a',
      metadata: { repository: 'myorg/myrepo', pr_number: '42' },
    });
    const b = await createSession({
      title: 'b',
      metadata: { repository: 'myorg/myrepo', pr_number: '7' },
    });
    await createSession({ title: 'c', metadata: { repository: 'other/repo' } });

    const got = await request(t.app).get(`/sessions/${String(a.id)}`);
    expect(got.status).toBe(200);
    expect(got.body).toEqual({ ...a, pending_action: null });

    const byRepo = await request(t.app)
      .get('/sessions')
      .query({ 'metadata.repository': 'myorg/myrepo' });
    expect(byRepo.status).toBe(200);
    expect(body(byRepo).total).toBe(2);
    expect((body(byRepo).sessions as { id: string }[]).map((s) => s.id).sort()).toEqual(
      [a.id, b.id].sort(),
    );

    const both = await request(t.app).get(
      '/sessions?metadata.repository=myorg/myrepo&metadata.pr_number=42',
    );
    expect((body(both).sessions as { id: string }[]).map((s) => s.id)).toEqual([a.id]);

    const paged = await request(t.app).get('/sessions?limit=2&offset=2');
    expect(body(paged).total).toBe(3);
    expect(body(paged).sessions).toHaveLength(1);

    const none = await request(t.app).get('/sessions?status=suspended');
    expect(none.body).toEqual({ sessions: [], total: 0 });
  });

  it('lists by agent and title text, sorted by the field and order asked for', async () => {
    await createSession({ title: 'Beta report', agent_name: 'readonly' });
    await createSession({ title: 'alpha REPORT' });
    await createSession({ title: 'gamma', agent_name: 'readonly' });
    const titles = async (query: string) =>
      (body(await request(t.app).get(`/sessions?${query}`)).sessions as { title: string }[]).map(
        (s) => s.title,
      );
    expect(await titles('title_contains=report&sort=title&order=asc')).toEqual([
      'Beta report',
      'alpha REPORT',
    ]);
    expect(await titles('agent_name=readonly&sort=title&order=desc')).toEqual([
      'gamma',
      'Beta report',
    ]);
    expect(await titles('agent_name=readonly&title_contains=gam')).toEqual(['gamma']);
    expect(await titles('sort=created_at&order=asc')).toEqual([
      'Beta report',
      'alpha REPORT',
      'gamma',
    ]);
  });

  it('rejects bad list queries with 422', async () => {
    for (const query of [
      'limit=0',
      'limit=abc',
      'limit=501',
      'offset=-1',
      'status=bogus',
      'sort=asc',
      'sort=cost',
      'order=up',
      'title_contains=',
      'agent_name=not%20a%20name!',
      'metadata.a=1&metadata.a=2',
      'limit=1&limit=2',
      '__proto__=1',
    ]) {
      const res = await request(t.app).get(`/sessions?${query}`);
      expect({ query, status: res.status }).toEqual({ query, status: 422 });
      expect(body(res).code).toBe('VALIDATION_ERROR');
    }
  });

  it('patches fields, enforces expected_version, and 404s unknown sessions', async () => {
    const s = await createSession({ title: 'before', metadata: { keep: 'no' } });
    const patched = await request(t.app)
      .patch(`/sessions/${String(s.id)}`)
      .send({
        title: 'after',
        metadata: { only: 'this' },
        status: 'suspended',
        agent_name: 'auditor',
        expected_version: 1,
      });
    expect(patched.status).toBe(200);
    expect(patched.body).toMatchObject({
      title: 'after',
      metadata: { only: 'this' },
      status: 'suspended',
      agent_name: 'auditor',
      version: 2,
    });

    const stale = await request(t.app)
      .patch(`/sessions/${String(s.id)}`)
      .send({ title: 'lost', expected_version: 1 });
    expect(stale.status).toBe(409);
    expect(body(stale).code).toBe('VERSION_CONFLICT');
    expect(body(await request(t.app).get(`/sessions/${String(s.id)}`)).title).toBe('after');

    const missing = await request(t.app).patch('/sessions/does-not-exist').send({ title: 'x' });
    expect(missing.status).toBe(404);
    expect(missing.body).toEqual({
      detail: 'Session not found: does-not-exist',
      code: 'SESSION_NOT_FOUND',
    });
  });

  it('deletes with 204, then 404', async () => {
    const s = await createSession();
    const del = await request(t.app).delete(`/sessions/${String(s.id)}`);
    expect(del.status).toBe(204);
    expect(del.text).toBe('');
    const again = await request(t.app).delete(`/sessions/${String(s.id)}`);
    expect(again.status).toBe(404);
    expect(body(again).detail).toBe(`Session not found: ${String(s.id)}`);
  });

  it('pages messages (default limit 50) and scopes a message to its session', async () => {
    const s = await createSession();
    const other = await createSession();
    const sessionId = String(s.id);
    for (let i = 0; i < 55; i += 1) {
      await t.storage.messages.create({
        sessionId,
        role: i % 2 ? 'assistant' : 'user',
        content: `m${i}`,
        metadata: { turnId: String(i) },
      });
    }
    const foreign = await t.storage.messages.create({
      sessionId: String(other.id),
      role: 'user',
      content: 'elsewhere',
    });

    const first = await request(t.app).get(`/sessions/${sessionId}/messages?order=asc`);
    expect(first.status).toBe(200);
    expect(body(first).total).toBe(55);
    expect(body(first).has_more).toBe(true);
    expect(body(first).messages).toHaveLength(50);
    const m0 = (body(first).messages as Record<string, unknown>[])[0];
    expect(m0).toEqual({
      id: expect.any(String) as string,
      session_id: sessionId,
      role: 'user',
      content: 'm0',
      tool_calls: [],
      tool_call_id: null,
      token_count: null,
      model_used: null,
      parent_id: null,
      metadata: { turnId: '0' },
      created_at: expect.any(String) as string,
      feedback: null,
    });
    const last = await request(t.app).get(
      `/sessions/${sessionId}/messages?limit=50&offset=50&order=asc`,
    );
    expect(last.body).toMatchObject({ total: 55, has_more: false });
    expect(body(last).messages).toHaveLength(5);
    expect((body(last).messages as { content: string }[]).map((m) => m.content)).toEqual([
      'm50',
      'm51',
      'm52',
      'm53',
      'm54',
    ]);
    // Without `order`, newest first (the original API's default), offsets from the newest.
    const newest = await request(t.app).get(`/sessions/${sessionId}/messages?limit=3&offset=1`);
    expect(newest.body).toMatchObject({ total: 55, has_more: true });
    expect((body(newest).messages as { content: string }[]).map((m) => m.content)).toEqual([
      'm53',
      'm52',
      'm51',
    ]);
    expect((await request(t.app).get(`/sessions/${sessionId}/messages?order=up`)).status).toBe(422);

    const one = await request(t.app).get(`/sessions/${sessionId}/messages/${String(m0?.id)}`);
    expect(one.status).toBe(200);
    expect(one.body).toEqual(m0);
    const cross = await request(t.app).get(`/sessions/${sessionId}/messages/${foreign.id}`);
    expect(cross.status).toBe(404);
    expect(body(cross).code).toBe('MESSAGE_NOT_FOUND');
    const noSession = await request(t.app).get('/sessions/missing/messages');
    expect(noSession.status).toBe(404);
  });

  it('reports circuit breakers as an object keyed by name with lower-case states', async () => {
    t.breakers.get('llm:openai');
    const health = await request(t.app).get('/health');
    expect(health.status).toBe(200);
    const breakers = (health.body as { circuit_breakers: Record<string, { state: string }> })
      .circuit_breakers;
    expect(Object.keys(breakers)).toContain('llm:openai');
    expect(breakers['llm:openai']?.state).toBe('closed');
  });

  it('reports health and readiness', async () => {
    await createSession();
    const health = await request(t.app).get('/health');
    expect(health.status).toBe(200);
    expect(health.body).toEqual({
      status: 'healthy',
      version: '0.0.0-test',
      active_sessions: 1,
      runs: { executing: 0, queued: 0, limit: 32 },
      storage: { backend: 'memory', ok: true, latency_ms: expect.any(Number) as number },
      circuit_breakers: {},
      node: { id: null, owned_runs: [], redis: null },
    });
    const ready = await request(t.app).get('/ready');
    expect(ready.status).toBe(200);
    expect(ready.body).toEqual({ ready: true });
  });

  it('serves the same data over /trpc with superjson', async () => {
    const s = await createSession({ title: 'via rest' });
    const res = await request(t.app)
      .get('/trpc/sessions.get')
      .query({ input: JSON.stringify(superjson.serialize({ id: s.id })) });
    expect(res.status).toBe(200);
    // Parse the raw text in this realm: superjson only walks plain objects of its own realm.
    const payload = JSON.parse(res.text) as { result: { data: never } };
    const session = superjson.deserialize<{ title: string; createdAt: Date }>(payload.result.data);
    expect(session.title).toBe('via rest');
    expect(session.createdAt).toBeInstanceOf(Date);
  });
});

describe('scoping and API keys', () => {
  const KEY = 'plain-key-0123456789';
  const PINNED = 'pinned-key-0123456789';
  let t: TestApp;
  beforeEach(async () => {
    t = await createTestApp({
      scoping: { enabled: true, keys: ['user', 'project'] },
      apiKeys: [
        { id: apiKeyFingerprint(KEY), key: KEY },
        { id: apiKeyFingerprint(PINNED), key: PINNED, scopes: { user: 'carol', project: 'p9' } },
      ],
    });
  });
  afterEach(() => t.close());

  function as(
    req: request.Test,
    user: string | undefined,
    key: string | undefined = KEY,
    project = 'p1',
  ): request.Test {
    if (key) req.set('Authorization', `Bearer ${key}`);
    if (user) req.set('X-Cognition-Scope-User', user).set('X-Cognition-Scope-Project', project);
    return req;
  }

  it('requires a valid bearer key on every route but /health, and never logs it', async () => {
    const missing = await request(t.app).get('/sessions').set('X-Cognition-Scope-User', 'a');
    expect(missing.status).toBe(401);
    expect(body(missing).code).toBe('UNAUTHORIZED');
    const wrong = await as(request(t.app).get('/sessions'), 'alice', 'wrong-key-0123456789');
    expect(wrong.status).toBe(401);
    expect((await request(t.app).get('/ready')).status).toBe(401);
    expect((await request(t.app).get('/openapi.json')).status).toBe(401);
    expect((await request(t.app).get('/trpc/sessions.list')).status).toBe(401);

    const health = await request(t.app).get('/health');
    expect(health.status).toBe(200);
    expect(body(health).active_sessions).toBeNull();
    expect(body(health).runs).toBeNull();
    expect((await as(request(t.app).get('/ready'), undefined)).status).toBe(200);

    const text = JSON.stringify(t.logs());
    // The requests were logged (issue 32: without their headers, so no key, not even redacted).
    expect(text).toContain('"url":"/trpc/sessions.list"');
    expect(text).not.toContain('"headers"');
    expect(text).not.toContain(KEY);
    expect(text).not.toContain('wrong-key-0123456789');
  });

  it('fails closed with 403 naming every missing scope header', async () => {
    const res = await request(t.app).get('/sessions').set('Authorization', `Bearer ${KEY}`);
    expect(res.status).toBe(403);
    expect(body(res).detail).toContain('X-Cognition-Scope-User');
    expect(body(res).detail).toContain('X-Cognition-Scope-Project');
    const trpc = await request(t.app)
      .get('/trpc/sessions.list')
      .set('Authorization', `Bearer ${KEY}`);
    expect(trpc.status).toBe(403);
  });

  it("hides other tenants' sessions with 404 on every session route, read and write", async () => {
    const created = await as(request(t.app).post('/sessions'), 'alice').send({
      title: 'alice only',
    });
    expect(created.status).toBe(201);
    expect(body(created).scopes).toEqual({ user: 'alice', project: 'p1' });
    const id = String(body(created).id);
    const message = await t.storage.messages.create({ sessionId: id, role: 'user', content: 'hi' });

    const probes = [
      as(request(t.app).get(`/sessions/${id}`), 'bob'),
      as(request(t.app).patch(`/sessions/${id}`), 'bob').send({ title: 'hijack' }),
      as(request(t.app).delete(`/sessions/${id}`), 'bob'),
      as(request(t.app).get(`/sessions/${id}/messages`), 'bob'),
      as(request(t.app).get(`/sessions/${id}/messages/${message.id}`), 'bob'),
      as(request(t.app).get(`/sessions/${id}/context`), 'bob'),
      as(request(t.app).get(`/sessions/${id}`), 'alice', KEY, 'p2'),
      as(request(t.app).get(`/sessions/${id}`), 'alice', PINNED),
    ];
    for (const res of await Promise.all(probes)) expect(res.status).toBe(404);
    const list = await as(request(t.app).get('/sessions'), 'bob');
    expect(list.body).toEqual({ sessions: [], total: 0 });

    const own = await as(request(t.app).get(`/sessions/${id}`), 'alice');
    expect(own.status).toBe(200);
    expect(body(own).title).toBe('alice only');
    const context = await as(request(t.app).get(`/sessions/${id}/context`), 'alice');
    expect(context.status).toBe(200);
    expect(body(context)).toMatchObject({ session_id: id, strategy: 'summarize', summary: null });
    const health = await as(request(t.app).get('/health'), 'alice');
    expect(body(health).active_sessions).toBe(1);
    expect(body(health).runs).toEqual({ executing: 0, queued: 0, limit: 32 });
    expect(body(await as(request(t.app).get('/health'), 'bob')).active_sessions).toBe(0);
  });

  it('lets a key with pinned scopes override the scope headers', async () => {
    const res = await as(request(t.app).post('/sessions'), 'mallory', PINNED).send({});
    expect(res.status).toBe(201);
    expect(body(res).scopes).toEqual({ user: 'carol', project: 'p9' });
    const noHeaders = await request(t.app)
      .get('/sessions')
      .set('Authorization', `Bearer ${PINNED}`);
    expect(noHeaders.status).toBe(200);
    expect(body(noHeaders).total).toBe(1);
  });
});
