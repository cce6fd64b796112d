import request from 'supertest';
import type { TestApp } from '../../../testing/test-app';
import { createTestApp } from '../../../testing/test-app';

type Json = Record<string, unknown>;

const ALICE = 'X-Cognition-Scope-User';

let t: TestApp;

beforeAll(async () => {
  t = await createTestApp({ scoping: { enabled: true, keys: ['user'] } });
});

afterAll(async () => {
  await t.close();
});

async function newSession(user: string, body: Json = {}): Promise<string> {
  const res = await request(t.app).post('/sessions').set(ALICE, user).send(body);
  expect(res.status).toBe(201);
  return String((res.body as Json).id);
}

/** One turn through the REST SSE route (the response ends after the terminal event). */
async function turn(user: string, sessionId: string, content: string): Promise<void> {
  const res = await request(t.app)
    .post(`/sessions/${sessionId}/messages`)
    .set(ALICE, user)
    .send({ content });
  expect(res.status).toBe(200);
  expect(res.text).toContain('event: done');
}

describe('usage, aggregates, feedback and QA over REST', () => {
  let priced: string;
  let unpriced: string;

  beforeAll(async () => {
    priced = await newSession('alice', {
      config: { provider_id: 'openai', model: 'gpt-4o-mini' },
      metadata: { team: 'red' },
    });
    unpriced = await newSession('alice', { metadata: { team: 'blue' } });
    t.model.push({ text: 'a1', usage: { input_tokens: 1_000_000, output_tokens: 100_000 } });
    await turn('alice', priced, 'q1');
    t.model.push({ text: 'a2', usage: { input_tokens: 100, output_tokens: 10 } });
    await turn('alice', unpriced, 'q2');
    await newSession('bob');
  });

  it('GET /sessions/{id}/usage: totals and per-model rows, snake_case; the session carries usage', async () => {
    const res = await request(t.app).get(`/sessions/${priced}/usage`).set(ALICE, 'alice');
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({
      session_id: priced,
      usage: {
        tokens_in: 1_000_000,
        tokens_out: 100_000,
        cost_usd: 0.21,
        cost_complete: true,
        runs: 1,
        error_count: 0,
        last_model: 'gpt-4o-mini',
        last_provider: 'openai',
      },
      models: [
        {
          provider: 'openai',
          model: 'gpt-4o-mini',
          calls: 1,
          tokens_in: 1_000_000,
          tokens_out: 100_000,
          cost_usd: 0.21,
          cost_complete: true,
        },
      ],
    });
    const session = await request(t.app).get(`/sessions/${priced}`).set(ALICE, 'alice');
    expect((session.body as Json).usage).toEqual((res.body as Json).usage);
    const list = await request(t.app).get('/sessions').set(ALICE, 'alice');
    const rows = (list.body as { sessions: Json[] }).sessions;
    expect(rows.find((s) => s.id === unpriced)?.usage).toMatchObject({
      tokens_in: 100,
      cost_usd: 0,
      cost_complete: false,
    });
    expect((await request(t.app).get(`/sessions/${priced}/usage`).set(ALICE, 'bob')).status).toBe(
      404,
    );
  });

  it('GET /sessions/stats is not a session id, and filters, buckets and scopes', async () => {
    const res = await request(t.app).get('/sessions/stats').set(ALICE, 'alice');
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({
      sessions: { total: 2, by_status: { active: 2, abandoned: 0 } },
      runs: { total: 2, failed: 0, aborted: 0 },
      tokens_in: 1_000_100,
      cost_usd: 0.21,
      cost_complete: false,
      feedback: { count: 0, average_score: null },
    });
    const red = await request(t.app)
      .get('/sessions/stats?metadata.team=red&bucket=hour')
      .set(ALICE, 'alice');
    expect(red.body).toMatchObject({ tokens_in: 1_000_000, cost_complete: true });
    const buckets = (red.body as { buckets: Json[] }).buckets;
    expect(buckets).toHaveLength(1);
    expect(String(buckets[0]?.start)).toMatch(/T\d\d:00:00\.000Z$/);
    const future = await request(t.app)
      .get('/sessions/stats?from=2100-01-01T00:00:00Z')
      .set(ALICE, 'alice');
    expect((future.body as { sessions: Json }).sessions.total).toBe(0);
    // Nothing idles for a second yet; with abandon_after_seconds=1 after a pause, all do.
    await new Promise((resolve) => setTimeout(resolve, 1100));
    const idle = await request(t.app)
      .get('/sessions/stats?status=abandoned&abandon_after_seconds=1')
      .set(ALICE, 'alice');
    expect((idle.body as { sessions: Json }).sessions).toMatchObject({
      total: 2,
      by_status: { abandoned: 2, active: 0 },
    });
    const bob = await request(t.app).get('/sessions/stats').set(ALICE, 'bob');
    expect(bob.body).toMatchObject({ sessions: { total: 1 }, runs: { total: 0 } });
  });

  it('GET /sessions/cost-by-model: most expensive first, with filters', async () => {
    const res = await request(t.app).get('/sessions/cost-by-model').set(ALICE, 'alice');
    expect(res.status).toBe(200);
    expect((res.body as { models: Json[] }).models.map((m) => [m.model, m.cost_complete])).toEqual([
      ['gpt-4o-mini', true],
      ['fake-model', false],
    ]);
    const blue = await request(t.app)
      .get('/sessions/cost-by-model?metadata.team=blue')
      .set(ALICE, 'alice');
    expect((blue.body as { models: Json[] }).models).toEqual([
      {
        provider: 'fake',
        model: 'fake-model',
        calls: 1,
        tokens_in: 100,
        tokens_out: 10,
        cost_usd: 0,
        cost_complete: false,
      },
    ]);
  });

  it('answers bad input on every new route with 422 naming the field', async () => {
    for (const [path, field] of [
      ['/sessions/stats?bucket=week', 'query.bucket'],
      ['/sessions/stats?from=yesterday', 'query.from'],
      ['/sessions/stats?status=sleeping', 'query.status'],
      ['/sessions/stats?abandon_after_seconds=0', 'query.abandon_after_seconds'],
      ['/sessions/stats?from=2026-02-01T00:00:00Z&to=2026-01-01T00:00:00Z', 'query.to'],
      ['/sessions/stats?metadata.team=a&metadata.team=b', 'query.metadata.team'],
      ['/sessions/cost-by-model?bucket=day', 'query'],
      [`/sessions/${priced}/qa?last_n=0`, 'query.last_n'],
    ] as const) {
      const res = await request(t.app).get(path).set(ALICE, 'alice');
      expect(res.status).toBe(422);
      const paths = ((res.body as { errors: { path: string }[] }).errors ?? []).map((e) => e.path);
      expect({ path, named: paths.some((p) => p.startsWith(field)) }).toEqual({
        path,
        named: true,
      });
    }
  });

  it('PUT/DELETE feedback round-trips on assistant messages; the message and QA show it', async () => {
    const messages = await request(t.app).get(`/sessions/${priced}/messages`).set(ALICE, 'alice');
    const list = (messages.body as { messages: Json[] }).messages;
    const answer = list.find((m) => m.role === 'assistant') as Json;
    const question = list.find((m) => m.role === 'user') as Json;
    expect(answer.feedback).toBeNull();
    const url = `/sessions/${priced}/messages/${String(answer.id)}/feedback`;
    const put = await request(t.app).put(url).set(ALICE, 'alice').send({ score: 4, text: 'ok' });
    expect(put.status).toBe(200);
    expect(put.body).toMatchObject({ score: 4, text: 'ok' });
    const again = await request(t.app).put(url).set(ALICE, 'alice').send({ score: 5 });
    expect(again.body).toMatchObject({ score: 5, text: null });
    const one = await request(t.app)
      .get(`/sessions/${priced}/messages/${String(answer.id)}`)
      .set(ALICE, 'alice');
    expect((one.body as Json).feedback).toMatchObject({ score: 5 });
    const qa = await request(t.app).get(`/sessions/${priced}/qa?last_n=10`).set(ALICE, 'alice');
    expect(qa.status).toBe(200);
    expect((qa.body as { entries: Json[] }).entries).toEqual([
      {
        qa_id: answer.id,
        time: answer.created_at,
        question: 'q1',
        answer: 'a1',
        context: [],
        feedback_score: 5,
        feedback_text: null,
      },
    ]);
    const stats = await request(t.app).get('/sessions/stats').set(ALICE, 'alice');
    expect((stats.body as Json).feedback).toEqual({ count: 1, average_score: 5 });

    const userUrl = `/sessions/${priced}/messages/${String(question.id)}/feedback`;
    const wrongRole = await request(t.app).put(userUrl).set(ALICE, 'alice').send({ score: 3 });
    expect(wrongRole.status).toBe(422);
    for (const [body, field] of [
      [{ score: 0 }, 'body.score'],
      [{ score: 2.5 }, 'body.score'],
      [{ score: 3, text: 'x'.repeat(5000) }, 'body.text'],
      [{}, 'body.score'],
      [{ score: 3, extra: 1 }, 'body'],
    ] as const) {
      const res = await request(t.app).put(url).set(ALICE, 'alice').send(body);
      expect(res.status).toBe(422);
      const paths = ((res.body as { errors: { path: string }[] }).errors ?? []).map((e) => e.path);
      expect(paths.some((p) => p.startsWith(field))).toBe(true);
    }
    const missing = `/sessions/${priced}/messages/nope/feedback`;
    expect((await request(t.app).put(missing).set(ALICE, 'alice').send({ score: 3 })).status).toBe(
      404,
    );
    expect((await request(t.app).put(url).set(ALICE, 'bob').send({ score: 1 })).status).toBe(404);
    expect((await request(t.app).delete(url).set(ALICE, 'alice')).status).toBe(204);
    expect((await request(t.app).delete(url).set(ALICE, 'alice')).status).toBe(204);
    expect((await request(t.app).delete(missing).set(ALICE, 'alice')).status).toBe(404);
    const after = await request(t.app)
      .get(`/sessions/${priced}/messages/${String(answer.id)}`)
      .set(ALICE, 'alice');
    expect((after.body as Json).feedback).toBeNull();
  });
});
