import { FixedWindowRateLimiter, RATE_WINDOW_MS, tenantOf } from './rate-limit';
import { toHttpError } from './errors';
import type { ApiTestBed } from './testing/test-bed';
import { createApiTestBed, trpcErrorOf } from './testing/test-bed';

describe('FixedWindowRateLimiter', () => {
  it('counts per bucket and tenant in one-minute windows and says when to retry', async () => {
    let now = 10 * RATE_WINDOW_MS + 15_000;
    const limiter = new FixedWindowRateLimiter({ requests: 2, runs: null }, () => now);
    expect((await limiter.take('requests', 'a')).allowed).toBe(true);
    expect((await limiter.take('requests', 'a')).allowed).toBe(true);
    expect(await limiter.take('requests', 'a')).toEqual({ allowed: false, retryAfterSeconds: 45 });
    expect((await limiter.take('requests', 'b')).allowed).toBe(true);
    // No limit set for runs: never counted.
    for (let i = 0; i < 5; i += 1) expect((await limiter.take('runs', 'a')).allowed).toBe(true);
    now += 45_000; // the next window
    expect((await limiter.take('requests', 'a')).allowed).toBe(true);
  });

  it('names tenants by scope, else API key, else the open server', () => {
    expect(tenantOf({ scope: { user: 'u1', project: 'p' } })).toBe(
      tenantOf({ scope: { project: 'p', user: 'u1' } }),
    );
    expect(tenantOf({ scope: { user: 'u1' } })).not.toBe(tenantOf({ scope: { user: 'u2' } }));
    expect(tenantOf({ scope: {}, apiKeyId: 'k1' })).toBe('key:k1');
    expect(tenantOf({ scope: {} })).toBe('open');
  });
});

describe('rate limits on the API', () => {
  let bed: ApiTestBed;
  afterEach(() => bed.cleanup());

  it('refuses calls over the requests budget with RATE_LIMITED (429), health unmetered', async () => {
    bed = await createApiTestBed();
    bed.services.rateLimiter = new FixedWindowRateLimiter({ requests: 3, runs: null });
    const alice = bed.as({ user: 'alice' });
    for (let i = 0; i < 3; i += 1) await alice.sessions.list({});
    const refused = await trpcErrorOf(alice.sessions.list({}));
    expect(refused.code).toBe('TOO_MANY_REQUESTS');
    expect(toHttpError(refused)).toMatchObject({ status: 429, body: { code: 'RATE_LIMITED' } });
    // Another tenant has its own budget; health checks are never counted.
    await bed.as({ user: 'bob' }).sessions.list({});
    for (let i = 0; i < 5; i += 1) await alice.health.get();
  });

  it('counts sends against the runs budget too', async () => {
    bed = await createApiTestBed();
    bed.services.rateLimiter = new FixedWindowRateLimiter({ requests: null, runs: 1 });
    const alice = bed.as({ user: 'alice' });
    const session = await alice.sessions.create({});
    bed.model.push({ text: 'one' });
    await alice.messages.send({ sessionId: session.id, content: 'first' });
    const refused = await trpcErrorOf(alice.messages.send({ sessionId: session.id, content: 'x' }));
    expect(refused.code).toBe('TOO_MANY_REQUESTS');
    expect(refused.message).toMatch(/Too many runs started by this tenant this minute/);
    // The streamed send starts a run as well.
    const streamed = await trpcErrorOf(
      alice.messages.stream({ sessionId: session.id, content: 'x' }),
    );
    expect(streamed.code).toBe('TOO_MANY_REQUESTS');
    // Other calls are not runs.
    await alice.sessions.get({ id: session.id });
  });
});
