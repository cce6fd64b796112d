import request from 'supertest';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { readSse } from '@cognition/runtime/testing/http';
import type { TestApp } from '../testing/test-app';
import { createTestApp } from '../testing/test-app';
import type { PromSample } from '../testing/prometheus';
import { parsePrometheus, sampleValue } from '../testing/prometheus';

const TOKEN = 'scrape-token-0123456789';
const API_KEY = 'api-key-0123456789abcdef';

async function scrape(t: TestApp, headers: Record<string, string> = {}): Promise<PromSample[]> {
  const res = await request(t.app).get('/metrics').set(headers);
  expect(res.status).toBe(200);
  expect(res.headers['content-type']).toMatch(/^text\/plain; version=0\.0\.4/);
  return parsePrometheus(res.text);
}

describe('GET /metrics', () => {
  let t: TestApp;
  afterEach(async () => {
    await t.close();
  });

  it("shows a turn's counters: runs, latency, tokens and cost by model, tools in the sandbox, storage, HTTP", async () => {
    t = await createTestApp();
    const created = await request(t.app)
      .post('/sessions')
      .send({ title: 'metrics', config: { provider_id: 'openai' } });
    expect(created.status).toBe(201);
    const id = String((created.body as { id: string }).id);
    t.model.push(
      {
        toolCalls: [{ name: 'execute', args: { command: 'ls -la' }, id: 'c1' }],
        usage: { input_tokens: 1000, output_tokens: 100 },
      },
      { text: ['Two ', 'files'], usage: { input_tokens: 2000, output_tokens: 200 } },
    );
    const turn = await request(t.app).post(`/sessions/${id}/messages`).send({ content: 'list' });
    expect(turn.status).toBe(200);
    expect(turn.text).toContain('event: done');

    const samples = await scrape(t);
    const value = (name: string, labels: Record<string, string> = {}) =>
      sampleValue(samples, name, labels);
    expect(value('cognition_runs_started_total', { resumed: 'false' })).toBe(1);
    expect(value('cognition_runs_finished_total', { outcome: 'completed' })).toBe(1);
    expect(value('cognition_turn_duration_seconds_count', { outcome: 'completed' })).toBe(1);
    expect(value('cognition_time_to_first_token_seconds_count')).toBe(1);
    const model = { provider: 'openai', model: 'gpt-4o-mini' };
    expect(value('cognition_model_calls_total', { ...model, estimated: 'false' })).toBe(2);
    expect(value('cognition_tokens_total', { ...model, type: 'input' })).toBe(3000);
    expect(value('cognition_tokens_total', { ...model, type: 'output' })).toBe(300);
    // gpt-4o-mini's list price: $0.15 in / $0.60 out per million tokens.
    expect(value('cognition_cost_usd_total', model)).toBeCloseTo(
      (3000 * 0.15 + 300 * 0.6) / 1e6,
      12,
    );
    expect(value('cognition_model_calls_unpriced_total', model)).toBeUndefined();
    expect(value('cognition_sandbox_executions_total', { backend: 'local', exit: '0' })).toBe(1);
    expect(value('cognition_sandbox_execution_duration_seconds_count', { backend: 'local' })).toBe(
      1,
    );
    expect(
      value('cognition_storage_operation_duration_seconds_count', {
        backend: 'memory',
        operation: 'runs.create',
        outcome: 'ok',
      }),
    ).toBe(1);
    expect(
      value('cognition_http_requests_total', { method: 'POST', route: '/sessions', status: '201' }),
    ).toBe(1);
    expect(
      value('cognition_http_requests_total', {
        method: 'POST',
        route: '/sessions/{id}/messages',
        status: '200',
      }),
    ).toBe(1);
    expect(
      value('cognition_http_request_duration_seconds_count', {
        method: 'POST',
        route: '/sessions/{id}/messages',
        status: '200',
      }),
    ).toBe(1);
    // Nothing is left open or queued once the turn is over.
    expect(value('cognition_active_streams', { transport: 'rest_sse' })).toBe(0);
    expect(value('cognition_event_subscriptions')).toBe(0);
    expect(value('cognition_runs_executing')).toBe(0);
    expect(value('cognition_runs_queued')).toBe(0);
    expect(value('cognition_runs_concurrency_limit')).toBe(32);
    expect(
      value('cognition_circuit_breaker_state', { breaker: 'llm:openai', state: 'CLOSED' }),
    ).toBe(1);
    expect(value('cognition_circuit_breaker_state', { breaker: 'llm:openai', state: 'OPEN' })).toBe(
      0,
    );
    // Process metrics, on the app's own registry.
    expect(value('process_cpu_user_seconds_total')).toBeGreaterThan(0);
    expect(value('nodejs_heap_size_used_bytes')).toBeGreaterThan(0);
    // The scrape is not in its own HTTP metrics.
    expect(samples.some((s) => s.labels['route'] === '/metrics')).toBe(false);
    expect(
      samples
        .filter((s) => s.name === 'cognition_http_requests_total')
        .map((s) => s.labels['route']),
    ).toEqual(['/sessions', '/sessions/{id}/messages']);
  });

  it("counts a failed run and an unpriced model's calls apart (never as $0)", async () => {
    t = await createTestApp({
      script: [
        { toolCalls: [{ name: 'execute', args: { command: 'false' }, id: 'c1' }] },
        { error: new Error('provider down') },
      ],
    });
    const id = String(
      ((await request(t.app).post('/sessions').send({})).body as { id: string }).id,
    );
    await request(t.app).post(`/sessions/${id}/messages`).send({ content: 'fail please' });
    const samples = await scrape(t);
    const value = (name: string, labels: Record<string, string> = {}) =>
      sampleValue(samples, name, labels);
    expect(value('cognition_runs_finished_total', { outcome: 'failed' })).toBe(1);
    expect(value('cognition_turn_duration_seconds_count', { outcome: 'failed' })).toBe(1);
    // No token reached the stream: no first-token sample.
    expect(value('cognition_time_to_first_token_seconds_count')).toBe(0);
    const fake = { provider: 'fake', model: 'fake-model' };
    // fake-model has no price: its call is counted apart, never as $0.
    expect(value('cognition_model_calls_total', { ...fake, estimated: 'true' })).toBe(1);
    expect(value('cognition_model_calls_unpriced_total', fake)).toBe(1);
    expect(value('cognition_cost_usd_total', fake)).toBeUndefined();
  });

  it('counts open event streams (REST and tRPC) and their subscriptions while the run streams', async () => {
    t = await createTestApp({ script: [{ text: 'partial', hang: true }] });
    const server = createServer(t.app);
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    try {
      const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
      const id = String(
        ((await request(t.app).post('/sessions').send({})).body as { id: string }).id,
      );
      const res = await fetch(`${base}/sessions/${id}/messages`, {
        method: 'POST',
        body: JSON.stringify({ content: 'hang' }),
      });
      expect(res.status).toBe(200);
      // A second client follows the same run over tRPC (httpSubscriptionLink's GET).
      const input = encodeURIComponent(JSON.stringify({ json: { sessionId: id } }));
      const trpc = await fetch(`${base}/trpc/runs.events?input=${input}`);
      expect(trpc.headers.get('content-type')).toBe('text/event-stream');
      let samples = await scrape(t);
      expect(sampleValue(samples, 'cognition_active_streams', { transport: 'rest_sse' })).toBe(1);
      expect(sampleValue(samples, 'cognition_active_streams', { transport: 'trpc_sse' })).toBe(1);
      expect(sampleValue(samples, 'cognition_event_subscriptions')).toBe(2);
      expect(sampleValue(samples, 'cognition_runs_executing')).toBe(1);
      expect((await request(t.app).post(`/sessions/${id}/abort`)).status).toBe(200);
      await readSse(res);
      await trpc.text();
      samples = await scrape(t);
      expect(sampleValue(samples, 'cognition_runs_finished_total', { outcome: 'aborted' })).toBe(1);
      expect(sampleValue(samples, 'cognition_active_streams', { transport: 'rest_sse' })).toBe(0);
      expect(sampleValue(samples, 'cognition_active_streams', { transport: 'trpc_sse' })).toBe(0);
      expect(sampleValue(samples, 'cognition_event_subscriptions')).toBe(0);
    } finally {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    }
  });

  it('labels requests with route patterns, never raw paths with ids', async () => {
    t = await createTestApp();
    const id = String(
      ((await request(t.app).post('/sessions').send({})).body as { id: string }).id,
    );
    await request(t.app).get(`/sessions/${id}`);
    await request(t.app).get(`/sessions/${id}/messages?limit=5`);
    await request(t.app).get('/sessions/sess_does_not_exist');
    await request(t.app).get('/no/such/path/12345');
    await request(t.app).get('/trpc/sessions.list');
    await request(t.app).get(
      `/trpc/sessions.get?input=${encodeURIComponent(JSON.stringify({ json: { id } }))}`,
    );
    await request(t.app).get('/trpc/sessions.list,health.get?batch=1&input={}');
    await request(t.app).get('/trpc/no.such.procedure');
    const samples = (await scrape(t)).filter((s) => s.name === 'cognition_http_requests_total');
    const routes = samples.map(
      (s) => `${s.labels['method']} ${s.labels['route']} ${s.labels['status']}`,
    );
    expect(routes.sort()).toEqual(
      [
        'POST /sessions 201',
        'GET /sessions/{id} 200',
        'GET /sessions/{id}/messages 200',
        'GET /sessions/{id} 404',
        'GET unmatched 404',
        'GET /trpc/sessions.list 200',
        'GET /trpc/sessions.get 200',
        'GET /trpc/{batch} 200',
        'GET /trpc/{unknown} 404',
      ].sort(),
    );
    for (const sample of samples) {
      expect(Object.values(sample.labels).join(' ')).not.toMatch(/sess_|12345/);
    }
  });

  it('keeps each app on its own registry', async () => {
    t = await createTestApp();
    const other = await createTestApp();
    try {
      await request(other.app).post('/sessions').send({});
      const samples = await scrape(t);
      expect(samples.filter((s) => s.name === 'cognition_http_requests_total')).toEqual([]);
    } finally {
      await other.close();
    }
  });

  describe('with COGNITION_METRICS_TOKEN', () => {
    it('answers 401 without the token or with a wrong one, 200 with it', async () => {
      t = await createTestApp({ metricsToken: TOKEN });
      const missing = await request(t.app).get('/metrics');
      expect(missing.status).toBe(401);
      expect(missing.headers['www-authenticate']).toBe('Bearer realm="metrics"');
      expect(missing.body).toMatchObject({ code: 'UNAUTHORIZED' });
      const wrong = await request(t.app).get('/metrics').set('Authorization', `Bearer ${TOKEN}x`);
      expect(wrong.status).toBe(401);
      const basic = await request(t.app).get('/metrics').set('Authorization', `Basic ${TOKEN}`);
      expect(basic.status).toBe(401);
      const ok = await request(t.app).get('/metrics').set('Authorization', `Bearer ${TOKEN}`);
      expect(ok.status).toBe(200);
      expect(ok.text).toContain('# TYPE cognition_runs_started_total counter');
    });

    it('takes the token instead of an API key', async () => {
      t = await createTestApp({ metricsToken: TOKEN, apiKeys: [{ id: 'k1', key: API_KEY }] });
      const withKey = await request(t.app)
        .get('/metrics')
        .set('Authorization', `Bearer ${API_KEY}`);
      expect(withKey.status).toBe(401);
      const withToken = await request(t.app)
        .get('/metrics')
        .set('Authorization', `Bearer ${TOKEN}`);
      expect(withToken.status).toBe(200);
    });
  });

  describe('without a metrics token', () => {
    it('is open like the other routes when no API keys are configured', async () => {
      t = await createTestApp();
      expect((await request(t.app).get('/metrics')).status).toBe(200);
    });

    it('needs an API key when keys are configured, but no scope headers', async () => {
      t = await createTestApp({
        apiKeys: [{ id: 'k1', key: API_KEY }],
        scoping: { enabled: true, keys: ['user'] },
      });
      const anonymous = await request(t.app).get('/metrics');
      expect(anonymous.status).toBe(401);
      const wrong = await request(t.app)
        .get('/metrics')
        .set('Authorization', 'Bearer not-a-valid-key-at-all');
      expect(wrong.status).toBe(401);
      const keyed = await request(t.app).get('/metrics').set('Authorization', `Bearer ${API_KEY}`);
      expect(keyed.status).toBe(200);
    });
  });

  it('is described in /openapi.json with the security it takes', async () => {
    type Doc = { paths: Record<string, { get?: { security?: unknown; responses: object } }> };
    t = await createTestApp({ metricsToken: TOKEN });
    const doc = (await request(t.app).get('/openapi.json')).body as Doc;
    expect(doc.paths['/metrics']?.get?.security).toEqual([{ metricsToken: [] }]);
    expect(Object.keys(doc.paths['/metrics']?.get?.responses ?? {})).toEqual(['200', '401', '422']);
    await t.close();
    t = await createTestApp();
    const open = (await request(t.app).get('/openapi.json')).body as Doc;
    expect(open.paths['/metrics']?.get?.security).toBeUndefined();
  });

  it('is not served when metrics are disabled', async () => {
    t = await createTestApp({ metricsEnabled: false });
    const res = await request(t.app).get('/metrics');
    expect(res.status).toBe(404);
    expect(res.body).toEqual({ detail: 'Not found: GET /metrics', code: 'NOT_FOUND' });
    const doc = (await request(t.app).get('/openapi.json')).body as { paths: object };
    expect(Object.keys(doc.paths)).not.toContain('/metrics');
  });

  it('rejects query parameters with a 422 naming them', async () => {
    t = await createTestApp();
    const res = await request(t.app).get('/metrics?name[]=cognition_runs_started_total&debug=1');
    expect(res.status).toBe(422);
    expect(res.body).toMatchObject({
      code: 'VALIDATION_ERROR',
      errors: [
        { path: 'query.name[]', message: expect.stringContaining('unknown parameter') as unknown },
        { path: 'query.debug', message: expect.stringContaining('unknown parameter') as unknown },
      ],
    });
  });
});
