import { createCognitionClient } from '@cognition/client';
import { createPrismaStorage } from '@cognition/storage-prisma';
import { TRPCClientError } from '@trpc/client';
import { http } from './testing/http';
import { createTestDatabase } from './testing/postgres';
import type { ServerProcess } from './testing/server-process';
import { startServerProcess, tempWorkspace } from './testing/server-process';

/**
 * Two tenants × every route × {own resource, other tenant's resource, missing scope header,
 * bad key}, against the built server on a fresh PostgreSQL database with scoping and API keys on.
 */
const KEY = 'e2e-gateway-key-0123456789';
const PINNED_KEY = 'e2e-pinned-bob-0123456789';
const TENANTS = ['alice', 'bob'] as const;
type Tenant = (typeof TENANTS)[number];
type Case = 'own' | 'other' | 'missing header' | 'bad key';
const CASES: Case[] = ['own', 'other', 'missing header', 'bad key'];

interface Fixture {
  sessionId: string;
  messageId: string;
}

interface RouteCase {
  name: string;
  /** Builds the request for `target`'s resources; a fresh fixture for destructive routes. */
  request(target: Fixture): { method: string; path: string; body?: unknown };
  expected: Record<Case, number>;
  destructive?: boolean;
}

const SESSION_ROUTE = { own: 200, other: 404, 'missing header': 403, 'bad key': 401 };
const ROUTES: RouteCase[] = [
  {
    name: 'POST /sessions',
    request: () => ({ method: 'POST', path: '/sessions', body: { title: 'new' } }),
    expected: { own: 201, other: 201, 'missing header': 403, 'bad key': 401 },
  },
  {
    name: 'GET /sessions',
    request: () => ({ method: 'GET', path: '/sessions' }),
    expected: { own: 200, other: 200, 'missing header': 403, 'bad key': 401 },
  },
  {
    name: 'GET /sessions/{id}',
    request: (f) => ({ method: 'GET', path: `/sessions/${f.sessionId}` }),
    expected: SESSION_ROUTE,
  },
  {
    name: 'PATCH /sessions/{id}',
    request: (f) => ({
      method: 'PATCH',
      path: `/sessions/${f.sessionId}`,
      body: { metadata: { touched: 'yes' } },
    }),
    expected: SESSION_ROUTE,
  },
  {
    name: 'DELETE /sessions/{id}',
    request: (f) => ({ method: 'DELETE', path: `/sessions/${f.sessionId}` }),
    expected: { ...SESSION_ROUTE, own: 204 },
    destructive: true,
  },
  {
    name: 'GET /sessions/{id}/messages',
    request: (f) => ({ method: 'GET', path: `/sessions/${f.sessionId}/messages` }),
    expected: SESSION_ROUTE,
  },
  {
    name: 'GET /sessions/{id}/messages/{mid}',
    request: (f) => ({ method: 'GET', path: `/sessions/${f.sessionId}/messages/${f.messageId}` }),
    expected: SESSION_ROUTE,
  },
  ...(
    [
      ['POST', 'suspend', undefined, 200],
      ['POST', 'resume', undefined, 200],
      ['PUT', 'metadata/k', { value: 'v' }, 200],
      ['DELETE', 'metadata/k', undefined, 200],
      ['GET', 'history', undefined, 200],
      ['GET', 'activity', undefined, 200],
      ['POST', 'clear', undefined, 200],
      ['POST', 'fork', {}, 201],
      // The fixture's message was written directly, so no checkpoint holds it yet: 409.
      ['POST', 'rewind', 'message', 409],
      ['POST', 'messages/rebuild', undefined, 200],
    ] as const
  ).map(([method, action, body, own]): RouteCase => ({
    name: `${method} /sessions/{id}/${action}`,
    request: (f) => ({
      method,
      path: `/sessions/${f.sessionId}/${action}`,
      ...(body === 'message'
        ? { body: { message_id: f.messageId } }
        : body !== undefined
          ? { body }
          : {}),
    }),
    expected: { ...SESSION_ROUTE, own },
  })),
  ...(['complete', 'fail'] as const).map((action): RouteCase => ({
    name: `POST /sessions/{id}/${action}`,
    request: (f) => ({ method: 'POST', path: `/sessions/${f.sessionId}/${action}` }),
    expected: SESSION_ROUTE,
    destructive: true,
  })),
  {
    name: 'GET /health',
    request: () => ({ method: 'GET', path: '/health' }),
    expected: { own: 200, other: 200, 'missing header': 200, 'bad key': 401 },
  },
  {
    name: 'GET /ready',
    request: () => ({ method: 'GET', path: '/ready' }),
    expected: { own: 200, other: 200, 'missing header': 200, 'bad key': 401 },
  },
  {
    name: 'GET /openapi.json',
    request: () => ({ method: 'GET', path: '/openapi.json' }),
    expected: { own: 200, other: 200, 'missing header': 200, 'bad key': 401 },
  },
];

describe('tenant isolation matrix (PostgreSQL, scoping + API keys)', () => {
  let server: ServerProcess;
  let database: Awaited<ReturnType<typeof createTestDatabase>>;

  function headers(tenant: Tenant | null, key = KEY): Record<string, string> {
    return {
      Authorization: `Bearer ${key}`,
      ...(tenant ? { 'X-Cognition-Scope-User': tenant } : {}),
    };
  }

  async function fixture(tenant: Tenant): Promise<Fixture> {
    const created = await http(server.url, 'POST', '/sessions', {
      headers: headers(tenant),
      body: { title: `${tenant}'s` },
    });
    expect(created.status).toBe(201);
    const sessionId = String(created.json?.['id']);
    const storage = createPrismaStorage({ provider: 'postgresql', url: database.url, poolSize: 1 });
    await storage.initialize();
    try {
      const message = await storage.messages.create({
        sessionId,
        role: 'user',
        content: `${tenant} says hi`,
      });
      return { sessionId, messageId: message.id };
    } finally {
      await storage.close();
    }
  }

  async function snapshot(tenant: Tenant): Promise<unknown> {
    const res = await http(server.url, 'GET', '/sessions?limit=500', { headers: headers(tenant) });
    return res.json;
  }

  // The server's state directory (its development secrets key) lives in a workspace of its own,
  // not in the checkout the spec runs from.
  let workspace: ReturnType<typeof tempWorkspace> | undefined;

  beforeAll(async () => {
    database = await createTestDatabase();
    workspace = tempWorkspace('cognition-tenancy-');
    server = await startServerProcess({
      COGNITION_WORKSPACE_ROOT: workspace.dir,
      COGNITION_PERSISTENCE_BACKEND: 'postgres',
      COGNITION_PERSISTENCE_URI: database.url,
      COGNITION_SCOPING_ENABLED: 'true',
      COGNITION_SCOPE_KEYS: 'user',
      COGNITION_API_KEYS: `${KEY},${PINNED_KEY}:user=bob`,
    });
  });

  afterAll(async () => {
    if (server) expect(await server.stop()).toBe(0);
    await database?.drop();
    workspace?.remove();
  });

  it('answers every route × tenant × case with the expected status, changing nothing it refuses', async () => {
    const fixtures: Record<Tenant, Fixture> = {
      alice: await fixture('alice'),
      bob: await fixture('bob'),
    };
    const results: string[] = [];
    const expected: string[] = [];
    for (const route of ROUTES) {
      for (const tenant of TENANTS) {
        const otherTenant: Tenant = tenant === 'alice' ? 'bob' : 'alice';
        for (const kase of CASES) {
          // Destructive own-resource calls get a fresh resource so the others still have one.
          const own =
            route.destructive && kase === 'own' ? await fixture(tenant) : fixtures[tenant];
          const target = kase === 'other' ? fixtures[otherTenant] : own;
          const before = await snapshot(otherTenant);
          const req = route.request(target);
          const res = await http(server.url, req.method, req.path, {
            headers:
              kase === 'missing header'
                ? headers(null)
                : kase === 'bad key'
                  ? headers(tenant, `${KEY}-wrong`)
                  : headers(tenant),
            ...(req.body !== undefined ? { body: req.body } : {}),
          });
          results.push(`${route.name} ${tenant} ${kase} -> ${res.status}`);
          expected.push(`${route.name} ${tenant} ${kase} -> ${route.expected[kase]}`);
          if (res.status >= 400) {
            expect(typeof res.json?.['detail']).toBe('string');
            if (route.name !== 'POST /sessions' && route.name !== 'GET /sessions') {
              expect(await snapshot(otherTenant)).toEqual(before);
            }
          }
          if (kase === 'missing header' && res.status === 403)
            expect(res.json?.['detail']).toContain('X-Cognition-Scope-User');
        }
      }
    }
    expect(results).toEqual(expected);

    // Lists only ever contain the caller's own sessions.
    for (const tenant of TENANTS) {
      const list = (await snapshot(tenant)) as { sessions: { scopes: Record<string, string> }[] };
      expect(list.sessions.length).toBeGreaterThan(0);
      expect(list.sessions.every((s) => s.scopes['user'] === tenant)).toBe(true);
    }
    // Health counts only the caller's sessions; anonymous callers get no count.
    const anonymous = await http(server.url, 'GET', '/health');
    expect(anonymous.json?.['active_sessions']).toBeNull();
  });

  it('applies the scope pinned to a key over the headers', async () => {
    const res = await http(server.url, 'POST', '/sessions', {
      headers: headers('alice', PINNED_KEY),
      body: {},
    });
    expect(res.status).toBe(201);
    expect(res.json?.['scopes']).toEqual({ user: 'bob' });
  });

  it('isolates tenants on /trpc through the typed client too', async () => {
    const alice = createCognitionClient({
      url: `${server.url}/trpc`,
      apiKey: KEY,
      scopes: { user: 'alice' },
    });
    const bob = createCognitionClient({
      url: `${server.url}/trpc`,
      apiKey: KEY,
      scopes: { user: 'bob' },
    });
    const session = await alice.sessions.create.mutate({ title: 'private' });
    await expect(bob.sessions.get.query({ id: session.id })).rejects.toBeInstanceOf(
      TRPCClientError,
    );
    const error = await bob.sessions.get
      .query({ id: session.id })
      .catch((e: unknown) => e as TRPCClientError<never>);
    expect((error as TRPCClientError<never>).data).toMatchObject({
      httpStatus: 404,
      code: 'SESSION_NOT_FOUND',
    });
    const noKey = createCognitionClient({ url: `${server.url}/trpc`, scopes: { user: 'alice' } });
    const unauthorized = await noKey.sessions.list
      .query()
      .catch((e: unknown) => e as TRPCClientError<never>);
    expect((unauthorized as TRPCClientError<never>).data).toMatchObject({ httpStatus: 401 });
    expect((await alice.sessions.get.query({ id: session.id })).title).toBe('private');
  });
});
