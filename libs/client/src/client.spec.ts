import type { AppRouter } from '@cognition/api';
import type { TestApiServer } from '@cognition/api/testing';
import { EMPTY_SESSION_USAGE } from '@cognition/contracts';
import { TRPCClientError } from '@trpc/client';
import { createServer } from 'node:http';
import type { IncomingHttpHeaders, Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { CognitionClient } from './client';
import { cognitionHeaders, createCognitionClient } from './client';
import type { TestBackend } from './testing/test-backend';
import { createTestBackend, startScopedApiServer } from './testing/test-backend';
import { streamMessage } from './stream-message';

type ApiClientError = TRPCClientError<AppRouter>;

describe('cognitionHeaders', () => {
  it('spells the bearer and one scope header per scope key', () => {
    expect(
      cognitionHeaders({ apiKey: 'k1', scopes: { user: 'alice', 'project-id': 'p' } }),
    ).toEqual({
      Authorization: 'Bearer k1',
      'X-Cognition-Scope-User': 'alice',
      'X-Cognition-Scope-Project-Id': 'p',
    });
    expect(cognitionHeaders({})).toEqual({});
  });
});

describe('createCognitionClient against the API', () => {
  let backend: TestBackend;
  let server: TestApiServer;

  beforeAll(async () => {
    backend = await createTestBackend();
    server = await startScopedApiServer(backend, { id: 'test', key: 'sk-test' });
  });

  afterAll(async () => {
    await server.close();
    await backend.cleanup();
  });

  function clientFor(user: string, apiKey = 'sk-test'): CognitionClient {
    return createCognitionClient({ url: server.url, apiKey, scopes: { user } });
  }

  it('creates, reads and lists sessions with dates revived and scopes applied', async () => {
    const alice = clientFor('alice');
    const created = await alice.sessions.create.mutate({
      title: 'from the client',
      metadata: { a: '1' },
    });
    expect(created.createdAt).toBeInstanceOf(Date);
    expect(created.scopes).toEqual({ user: 'alice' });

    // Queries issued together travel in one batch request.
    const before = server.requests.length;
    const [fetched, page] = await Promise.all([
      alice.sessions.get.query({ id: created.id }),
      alice.sessions.list.query({ limit: 10 }),
    ]);
    expect(server.requests.length).toBe(before + 1);
    expect(fetched).toEqual({ ...created, pendingAction: null });
    expect(created.usage).toEqual(EMPTY_SESSION_USAGE);
    expect(page.sessions.map((s) => s.id)).toContain(created.id);

    expect((await clientFor('bob').sessions.list.query()).total).toBe(0);
  });

  it('reads usage, stats with buckets, cost by model and search hits with dates revived', async () => {
    const alice = clientFor('alice');
    const session = await alice.sessions.create.mutate({ title: 'analytics' });
    await backend.storage.messages.create({
      sessionId: session.id,
      role: 'assistant',
      content: 'the quarterly numbers are in',
    });
    const usage = await alice.sessions.usage.query({ id: session.id });
    expect(usage).toEqual({ sessionId: session.id, usage: EMPTY_SESSION_USAGE, models: [] });
    const stats = await alice.sessions.stats.query({ bucket: 'day' });
    expect(stats.sessions.total).toBeGreaterThanOrEqual(1);
    expect(stats.buckets?.[0]?.start).toBeInstanceOf(Date);
    expect(await alice.sessions.costByModel.query()).toEqual([]);
    const found = await alice.messages.search.query({ q: 'quarterly' });
    expect(found.total).toBe(1);
    expect(found.hits[0]?.createdAt).toBeInstanceOf(Date);
    expect(found.hits[0]?.snippet).toContain('[quarterly]');
    expect((await clientFor('bob').messages.search.query({ q: 'quarterly' })).total).toBe(0);
  });

  it("reads a session's context-window view, scoped like every session read", async () => {
    const alice = clientFor('alice');
    const session = await alice.sessions.create.mutate({ title: 'context' });
    backend.model.push({ text: 'hello there' });
    for await (const _event of streamMessage(alice, { sessionId: session.id, content: 'hi' })) {
      // drained: the view is read after the run's terminal event
    }
    const view = await alice.sessions.context.query({ id: session.id });
    expect(view).toMatchObject({
      session_id: session.id,
      agent: 'default',
      strategy: 'summarize',
      thread_messages: 2,
      visible_messages: 2,
      summary: null,
      will_compact: false,
    });
    expect(view.parts.total).toBe(
      view.parts.system_prompt + view.parts.tool_schemas + view.parts.summary + view.parts.messages,
    );
    const hidden = await clientErrorOf(clientFor('bob').sessions.context.query({ id: session.id }));
    expect(hidden.data).toMatchObject({ code: 'SESSION_NOT_FOUND', httpStatus: 404 });
  });

  /** The TRPCClientError a call rejected with; fails the test when it resolved. */
  async function clientErrorOf(call: Promise<unknown>): Promise<ApiClientError> {
    const outcome = await call.then(
      () => new Error('expected the call to fail, it succeeded'),
      (error: unknown) => error,
    );
    if (outcome instanceof TRPCClientError) return outcome as ApiClientError;
    throw outcome;
  }

  it('surfaces our error code and field issues on TRPCClientError', async () => {
    const alice = clientFor('alice');
    const notFound = await clientErrorOf(alice.sessions.get.query({ id: 'nope' }));
    expect(notFound.message).toBe('Session not found: nope');
    expect(notFound.data).toMatchObject({ code: 'SESSION_NOT_FOUND', httpStatus: 404 });

    const invalid = await clientErrorOf(alice.sessions.create.mutate({ title: 'x'.repeat(201) }));
    expect(invalid.data).toMatchObject({
      code: 'VALIDATION_ERROR',
      httpStatus: 422,
      errors: [{ path: 'title', message: expect.any(String) as string }],
    });
  });

  it('is rejected with 401 for a wrong key and 403 without scope headers', async () => {
    const wrongKey = await clientErrorOf(clientFor('alice', 'sk-wrong').sessions.list.query());
    expect(wrongKey.data).toMatchObject({ code: 'UNAUTHORIZED', httpStatus: 401 });

    const unscoped = createCognitionClient({ url: server.url, apiKey: 'sk-test' });
    const forbidden = await clientErrorOf(unscoped.sessions.list.query());
    expect(forbidden.data).toMatchObject({ code: 'FORBIDDEN', httpStatus: 403 });
    expect(forbidden.message).toContain('X-Cognition-Scope-User');
  });
});

describe('createCognitionClient transport', () => {
  let server: Server;
  let url: string;
  const seen: { method: string; path: string; headers: IncomingHttpHeaders }[] = [];

  beforeAll(async () => {
    server = createServer((req, res) => {
      seen.push({ method: req.method ?? '', path: req.url ?? '', headers: req.headers });
      if (req.headers.accept === 'text/event-stream') {
        // tRPC's SSE handshake: the client reports `started` once it sees this event.
        res.writeHead(200, { 'content-type': 'text/event-stream' });
        res.write('event: connected\ndata: {}\n\n');
        return;
      }
      res.writeHead(503).end();
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/trpc`;
  });

  afterAll(async () => {
    server.closeAllConnections();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  });

  it('sends the key and scope headers on subscriptions too, through the given fetch', async () => {
    const fetchCalls: string[] = [];
    const client = createCognitionClient({
      url,
      apiKey: 'sk-sub',
      scopes: { user: 'carol', project: 'p7' },
      fetch: (input, init) => {
        fetchCalls.push(String(input instanceof Request ? input.url : input));
        return fetch(input, init);
      },
    });

    await client.health.get.query().catch(() => undefined);

    let subscription: { unsubscribe(): void } | undefined;
    try {
      await new Promise<void>((resolve, reject) => {
        // A failing run must not leave a reconnecting EventSource behind.
        const timer = setTimeout(() => reject(new Error('subscription never started')), 5000);
        subscription = client.runs.events.subscribe(
          { sessionId: 's1', runId: 'r1' },
          {
            onStarted: () => {
              clearTimeout(timer);
              resolve();
            },
            onError: () => {
              clearTimeout(timer);
              reject(new Error('subscription failed'));
            },
          },
        );
      });
    } finally {
      subscription?.unsubscribe();
    }

    const query = seen.find((r) => r.path.startsWith('/trpc/health.get'));
    const stream = seen.find((r) => r.path.startsWith('/trpc/runs.events'));
    for (const request of [query, stream]) {
      expect(request?.headers).toMatchObject({
        authorization: 'Bearer sk-sub',
        'x-cognition-scope-user': 'carol',
        'x-cognition-scope-project': 'p7',
      });
    }
    expect(stream?.headers.accept).toBe('text/event-stream');
    expect(fetchCalls.some((u) => u.includes('/trpc/health.get'))).toBe(true);
    expect(fetchCalls.some((u) => u.includes('/trpc/runs.events'))).toBe(true);
  });
});
