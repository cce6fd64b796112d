import request from 'supertest';
import superjson from 'superjson';
import type { TestApp } from '../testing/test-app';
import { createTestApp } from '../testing/test-app';

describe('per-tenant rate limits over HTTP', () => {
  let t: TestApp;
  afterEach(() => t.close());

  it('answers 429 RATE_LIMITED with Retry-After on REST and tRPC, from one budget', async () => {
    t = await createTestApp({ rateLimits: { requests: 3, runs: null } });
    expect((await request(t.app).get('/sessions')).status).toBe(200);
    const trpc = () =>
      request(t.app)
        .get('/trpc/sessions.list')
        .query({ input: JSON.stringify(superjson.serialize({})) });
    expect((await trpc()).status).toBe(200);
    expect((await request(t.app).get('/sessions')).status).toBe(200);

    const rest = await request(t.app).get('/sessions');
    expect(rest.status).toBe(429);
    expect(Number(rest.headers['retry-after'])).toBeGreaterThanOrEqual(1);
    expect(Number(rest.headers['retry-after'])).toBeLessThanOrEqual(60);
    expect(rest.body).toMatchObject({
      code: 'RATE_LIMITED',
      detail: expect.stringMatching(/^Too many requests from this tenant this minute/) as string,
    });
    const overTrpc = await trpc();
    expect(overTrpc.status).toBe(429);
    expect(overTrpc.headers['retry-after']).toBeDefined();
    expect(JSON.stringify(overTrpc.body)).toContain('RATE_LIMITED');

    // Probes are never counted.
    expect((await request(t.app).get('/health')).status).toBe(200);
    expect((await request(t.app).get('/ready')).status).toBe(200);
  });

  it('limits runs per minute on POST /sessions/{id}/messages', async () => {
    t = await createTestApp({ rateLimits: { requests: null, runs: 1 }, script: [{ text: 'ok' }] });
    const created = await request(t.app).post('/sessions').send({});
    const id = String((created.body as { id: string }).id);
    const first = await request(t.app).post(`/sessions/${id}/messages`).send({ content: 'hi' });
    expect(first.status).toBe(200);
    const second = await request(t.app).post(`/sessions/${id}/messages`).send({ content: 'again' });
    expect(second.status).toBe(429);
    expect(second.headers['retry-after']).toBeDefined();
    expect(second.body).toMatchObject({ code: 'RATE_LIMITED' });
  });
});
