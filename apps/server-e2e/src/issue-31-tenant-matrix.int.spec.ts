import { mkdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import type { RecordedRequest } from '@cognition/runtime/testing/http';
import { FakeOpenAIServer, startAgentServer } from './testing/agent-server';
import type { HttpResponse } from './testing/http';
import { http } from './testing/http';
import type { ServerDatabase } from './testing/postgres';
import { postgresServerDatabase, sqliteServerDatabase } from './testing/postgres';
import type { ServerProcess } from './testing/server-process';
import { tempWorkspace } from './testing/server-process';

/**
 * Issue 31 item 4: tenant isolation over everything added since tenancy-matrix.int.spec.ts was
 * written — artifacts, activity, usage and stats, cost by model, feedback, QA, search, the
 * registry, skills, context view, history/fork/rewind, HITL resume, /metrics — on SQLite and
 * PostgreSQL. Two tenants with pinned keys each own a session with two finished turns,
 * feedback, artifacts and a run paused for a decision; every route is called by each tenant
 * with the other's ids and filters (and with its own, so a 404 means isolation, not a broken
 * fixture). Another tenant's resource is a 404 whose body carries none of its data; lists,
 * searches and aggregates carry none of it; the owner's data is unchanged afterwards.
 */
type Json = Record<string, unknown>;
const TENANTS = ['alice', 'bob'] as const;
type Tenant = (typeof TENANTS)[number];
const KEYS: Record<Tenant, string> = {
  alice: 'matrix-alice-key-0123456789',
  bob: 'matrix-bob-key-0123456789ab',
};

const CAREFUL_AGENT = `---
description: Runs commands only once a person approves them.
tools: [ls, execute]
interrupt_on:
  execute: { allowed: [approve, reject] }
---

You run shell commands for the user.
`;

/** Echoes the user's words (so answers carry the tenant's marker); `HITL` asks for a command. */
function reply(request: RecordedRequest) {
  const last = (request.body.messages ?? []).at(-1);
  const content = typeof last?.content === 'string' ? last.content : '';
  if (last?.role === 'tool') return { text: `The tool said: ${content.trim()}` };
  const hitl = /HITL (\S+)/.exec(content);
  if (hitl) {
    return {
      toolCalls: [{ id: `call_${hitl[1]}`, name: 'execute', args: { command: 'echo approved' } }],
    };
  }
  return { text: `You said: ${content}` };
}

interface Fixture {
  marker: string;
  session: string;
  /** The first turn's user message and the answer to it. */
  userMessage: string;
  answer: string;
  run: string;
  artifact: string;
  hitlSession: string;
  hitlRun: string;
  hitlCall: string;
}

interface RouteCase {
  name: string;
  /** The request for the `target` tenant's resources, made by the caller with `own` ones. */
  request(target: Fixture, own: Fixture): { method: string; path: string; body?: unknown };
  /** Status when the caller uses its own resources (a sanity check of the fixture). */
  own: number;
  /** Status with the other tenant's: 404 for what they own; 200 for lists/filters. */
  other: number;
}

const S = (f: Fixture) => `/sessions/${f.session}`;
const q = encodeURIComponent;

const ROUTES: RouteCase[] = [
  // usage, stats and cost by model
  {
    name: 'GET usage',
    request: (f) => ({ method: 'GET', path: `${S(f)}/usage` }),
    own: 200,
    other: 404,
  },
  {
    name: 'GET /sessions/stats?agent_name',
    request: () => ({ method: 'GET', path: '/sessions/stats?agent_name=default' }),
    own: 200,
    other: 200,
  },
  {
    name: 'GET /sessions/cost-by-model',
    request: () => ({ method: 'GET', path: '/sessions/cost-by-model' }),
    own: 200,
    other: 200,
  },
  // feedback and QA
  {
    name: 'PUT feedback',
    request: (f) => ({
      method: 'PUT',
      path: `${S(f)}/messages/${f.answer}/feedback`,
      body: { score: 1, text: 'overwritten?' },
    }),
    own: 200,
    other: 404,
  },
  {
    name: 'PUT feedback (own session, other message)',
    request: (f, own) => ({
      method: 'PUT',
      path: `${S(own)}/messages/${f.answer}/feedback`,
      body: { score: 1 },
    }),
    own: 200,
    other: 404,
  },
  { name: 'GET qa', request: (f) => ({ method: 'GET', path: `${S(f)}/qa` }), own: 200, other: 404 },
  // search
  {
    name: 'GET session message search',
    request: (f) => ({ method: 'GET', path: `${S(f)}/messages/search?q=${q(f.marker)}` }),
    own: 200,
    other: 404,
  },
  {
    name: 'GET /messages/search?q=<marker>',
    request: (f) => ({ method: 'GET', path: `/messages/search?q=${q(f.marker)}` }),
    own: 200,
    other: 200,
  },
  {
    name: 'GET /messages/search?session_id',
    request: (f) => ({ method: 'GET', path: `/messages/search?q=said&session_id=${f.session}` }),
    own: 200,
    // A filter naming a session the caller cannot see is that session's 404.
    other: 404,
  },
  {
    name: 'GET /sessions?title_contains',
    request: (f) => ({ method: 'GET', path: `/sessions?title_contains=${q(f.marker)}` }),
    own: 200,
    other: 200,
  },
  // context view, activity, history, fork, rewind
  {
    name: 'GET context',
    request: (f) => ({ method: 'GET', path: `${S(f)}/context` }),
    own: 200,
    other: 404,
  },
  {
    name: 'GET activity',
    request: (f) => ({ method: 'GET', path: `${S(f)}/activity` }),
    own: 200,
    other: 404,
  },
  {
    name: 'GET history',
    request: (f) => ({ method: 'GET', path: `${S(f)}/history` }),
    own: 200,
    other: 404,
  },
  {
    name: 'POST fork by message',
    request: (f) => ({ method: 'POST', path: `${S(f)}/fork`, body: { message_id: f.answer } }),
    own: 201,
    other: 404,
  },
  {
    name: 'POST fork (own session, other message)',
    request: (f, own) => ({
      method: 'POST',
      path: `${S(own)}/fork`,
      body: { message_id: f.answer },
    }),
    own: 201,
    other: 404,
  },
  {
    name: 'POST rewind (own session, other message)',
    request: (f, own) => ({
      method: 'POST',
      path: `${S(own)}/rewind`,
      body: { message_id: f.userMessage },
    }),
    own: 200,
    other: 404,
  },
  // runs and HITL resume
  {
    name: 'GET runs',
    request: (f) => ({ method: 'GET', path: `${S(f)}/runs` }),
    own: 200,
    other: 404,
  },
  {
    name: 'GET run',
    request: (f) => ({ method: 'GET', path: `${S(f)}/runs/${f.run}` }),
    own: 200,
    other: 404,
  },
  {
    name: 'GET run (own session, other run)',
    request: (f, own) => ({ method: 'GET', path: `${S(own)}/runs/${f.run}` }),
    own: 200,
    other: 404,
  },
  {
    name: 'POST HITL resume (reject)',
    request: (f) => ({
      method: 'POST',
      path: `/sessions/${f.hitlSession}/runs/${f.hitlRun}/resume`,
      body: { decisions: [{ tool_call_id: f.hitlCall, type: 'reject', message: 'no' }] },
    }),
    // Own: checked last, once (it ends the pause); see the test.
    own: 0,
    other: 404,
  },
  // artifacts
  {
    name: 'GET artifact',
    request: (f) => ({ method: 'GET', path: `/artifacts/${f.artifact}` }),
    own: 200,
    other: 404,
  },
  {
    name: 'GET artifact versions',
    request: (f) => ({ method: 'GET', path: `/artifacts/${f.artifact}/versions` }),
    own: 200,
    other: 404,
  },
  {
    name: 'PUT artifact',
    request: (f) => ({
      method: 'PUT',
      path: `/artifacts/${f.artifact}`,
      body: { content: f.marker },
    }),
    own: 200,
    other: 404,
  },
  {
    name: 'GET session artifacts',
    request: (f) => ({ method: 'GET', path: `${S(f)}/artifacts` }),
    own: 200,
    other: 404,
  },
  {
    name: 'GET /artifacts?session_id',
    request: (f) => ({ method: 'GET', path: `/artifacts?session_id=${f.session}` }),
    own: 200,
    other: 200,
  },
  {
    name: 'POST /artifacts into the session',
    request: (f) => ({
      method: 'POST',
      path: '/artifacts',
      body: { name: `${f.marker}-planted.md`, content: 'planted', session_id: f.session },
    }),
    own: 201,
    other: 404,
  },
  // registry, skills, metrics: shared or process-wide, but never another tenant's data
  {
    name: 'GET /agents',
    request: () => ({ method: 'GET', path: '/agents' }),
    own: 200,
    other: 200,
  },
  {
    name: 'GET /providers',
    request: () => ({ method: 'GET', path: '/providers' }),
    own: 200,
    other: 200,
  },
  {
    name: 'GET /skills',
    request: () => ({ method: 'GET', path: '/skills' }),
    own: 200,
    other: 200,
  },
  {
    name: 'GET /metrics',
    request: () => ({ method: 'GET', path: '/metrics' }),
    own: 200,
    other: 200,
  },
  {
    name: 'DELETE artifact',
    request: (f) => ({ method: 'DELETE', path: `/artifacts/${f.artifact}` }),
    // Own: not run (it would remove the fixture); the other tenant's must be a 404.
    own: 0,
    other: 404,
  },
];

/** tRPC procedures given the other tenant's ids: each must fail with 404. */
const PROCEDURES: { path: string; type: 'query' | 'mutation'; input(f: Fixture): Json }[] = [
  { path: 'sessions.usage', type: 'query', input: (f) => ({ id: f.session }) },
  { path: 'sessions.qa', type: 'query', input: (f) => ({ sessionId: f.session }) },
  { path: 'sessions.context', type: 'query', input: (f) => ({ id: f.session }) },
  { path: 'sessions.history', type: 'query', input: (f) => ({ id: f.session }) },
  { path: 'sessions.activity', type: 'query', input: (f) => ({ id: f.session }) },
  { path: 'runs.get', type: 'query', input: (f) => ({ sessionId: f.session, runId: f.run }) },
  { path: 'artifacts.get', type: 'query', input: (f) => ({ id: f.artifact }) },
  { path: 'artifacts.versions', type: 'query', input: (f) => ({ id: f.artifact }) },
  {
    path: 'messages.search',
    type: 'query',
    input: (f) => ({ sessionId: f.session, q: f.marker }),
  },
  {
    path: 'runs.resume',
    type: 'mutation',
    input: (f) => ({
      sessionId: f.hitlSession,
      runId: f.hitlRun,
      decisions: [{ tool_call_id: f.hitlCall, type: 'approve' }],
    }),
  },
];

describe.each(['sqlite', 'postgres'] as const)(
  'issue 31: tenant × route matrix on %s',
  (backend) => {
    // Made in beforeAll: a describe skipped by -t runs no afterAll to remove it.
    let workspace: ReturnType<typeof tempWorkspace>;
    let fake: FakeOpenAIServer;
    let server: ServerProcess;
    let database: ServerDatabase;

    const auth = (tenant: Tenant) => ({ Authorization: `Bearer ${KEYS[tenant]}` });
    async function call(tenant: Tenant, method: string, p: string, body?: unknown) {
      return http(server.url, method, p, {
        headers: auth(tenant),
        ...(body !== undefined ? { body } : {}),
      });
    }
    async function ok(tenant: Tenant, method: string, p: string, body?: unknown): Promise<Json> {
      const res = await call(tenant, method, p, body);
      if (res.status >= 300)
        throw new Error(`${method} ${p} as ${tenant}: ${res.status} ${res.text}`);
      return res.json ?? {};
    }

    async function fixture(tenant: Tenant): Promise<Fixture> {
      const marker = `${tenant.toUpperCase()}SECRET${backend}`;
      const session = String(
        (
          await ok(tenant, 'POST', '/sessions', {
            title: `${marker} title`,
            metadata: { m: marker },
          })
        )['id'],
      );
      for (const n of [1, 2]) {
        const res = await fetch(`${server.url}/sessions/${session}/messages`, {
          method: 'POST',
          headers: { ...auth(tenant), 'Content-Type': 'application/json' },
          body: JSON.stringify({ content: `${marker} turn ${n}` }),
        });
        expect(await res.text()).toContain('event: done');
      }
      const messages = (await ok(tenant, 'GET', `/sessions/${session}/messages?order=asc`))[
        'messages'
      ] as Json[];
      const userMessage = String(messages.find((m) => m['role'] === 'user')?.['id']);
      const answer = String(messages.find((m) => m['role'] === 'assistant')?.['id']);
      await ok(tenant, 'PUT', `/sessions/${session}/messages/${answer}/feedback`, {
        score: 5,
        text: `${marker} feedback`,
      });
      const runs = (await ok(tenant, 'GET', `/sessions/${session}/runs`))['runs'] as Json[];
      const artifact = String(
        (
          await ok(tenant, 'POST', '/artifacts', {
            name: `${marker}.md`,
            content: `${marker} artifact`,
            session_id: session,
          })
        )['id'],
      );
      await ok(tenant, 'POST', '/artifacts', {
        name: `${marker}-public.md`,
        content: `${marker} public`,
        visibility: 'public',
      });
      const hitlSession = String(
        (await ok(tenant, 'POST', '/sessions', { title: `${marker} hitl`, agent_name: 'careful' }))[
          'id'
        ],
      );
      const paused = await fetch(`${server.url}/sessions/${hitlSession}/messages`, {
        method: 'POST',
        headers: { ...auth(tenant), 'Content-Type': 'application/json' },
        body: JSON.stringify({ content: `HITL ${marker}` }),
      });
      expect(await paused.text()).toContain('event: interrupt');
      const hitlRun = String(paused.headers.get('x-cognition-run-id'));
      return {
        marker,
        session,
        userMessage,
        answer,
        run: String(runs[0]?.['id']),
        artifact,
        hitlSession,
        hitlRun,
        hitlCall: `call_${marker}`,
      };
    }

    /** What the owner sees of its data: unchanged by anything the other tenant tried. */
    async function ownerView(tenant: Tenant, f: Fixture): Promise<unknown[]> {
      return Promise.all(
        [
          S(f),
          `${S(f)}/messages`,
          `${S(f)}/qa`,
          `${S(f)}/runs`,
          `${S(f)}/history`,
          `/artifacts/${f.artifact}`,
          `/sessions/${f.hitlSession}/runs/${f.hitlRun}`,
          '/sessions/stats',
          '/sessions/cost-by-model',
        ].map(async (p) => (await ok(tenant, 'GET', p)) as unknown),
      );
    }

    beforeAll(async () => {
      workspace = tempWorkspace('cognition-matrix-');
      database =
        backend === 'sqlite'
          ? await sqliteServerDatabase('cognition-matrix-db-')
          : await postgresServerDatabase();
      mkdirSync(path.join(workspace.dir, '.cognition', 'agents'), { recursive: true });
      writeFileSync(path.join(workspace.dir, '.cognition', 'agents', 'careful.md'), CAREFUL_AGENT);
      fake = await FakeOpenAIServer.start({ fallback: reply });
      server = await startAgentServer(fake, workspace.dir, {
        ...database.env,
        COGNITION_SCOPING_ENABLED: 'true',
        COGNITION_SCOPE_KEYS: 'user',
        COGNITION_API_KEYS: `${KEYS.alice}:user=alice,${KEYS.bob}:user=bob`,
      });
    });

    afterAll(async () => {
      if (server) expect(await server.stop()).toBe(0);
      await fake?.close();
      await database?.drop();
      workspace?.remove();
    });

    it(`every route × tenant with the other tenant's ids: 404 or nothing of theirs; ${ROUTES.length} routes, ${PROCEDURES.length} procedures`, async () => {
      const fixtures: Record<Tenant, Fixture> = {
        alice: await fixture('alice'),
        bob: await fixture('bob'),
      };
      const before = {
        alice: await ownerView('alice', fixtures.alice),
        bob: await ownerView('bob', fixtures.bob),
      };
      const results: string[] = [];
      const expected: string[] = [];
      const leaks: string[] = [];
      const check = (tenant: Tenant, label: string, res: HttpResponse, want: number) => {
        const other = fixtures[tenant === 'alice' ? 'bob' : 'alice'];
        results.push(`${label} as ${tenant} -> ${res.status}`);
        expected.push(`${label} as ${tenant} -> ${want}`);
        const secrets = [other.marker, other.session, other.run, other.artifact, other.answer];
        // An id the request itself carried may be echoed in a 404's detail; data may not.
        const echoed = (s: string) => res.status === 404 && s !== other.marker;
        for (const secret of secrets) {
          if (res.text.includes(secret) && !echoed(secret))
            leaks.push(`${label} as ${tenant}: ${secret}`);
        }
      };

      for (const tenant of TENANTS) {
        const own = fixtures[tenant];
        const other = fixtures[tenant === 'alice' ? 'bob' : 'alice'];
        for (const route of ROUTES) {
          const req = route.request(other, own);
          check(
            tenant,
            `${route.name} (other)`,
            await call(tenant, req.method, req.path, req.body),
            route.other,
          );
        }
        for (const procedure of PROCEDURES) {
          const input = encodeURIComponent(JSON.stringify({ json: procedure.input(other) }));
          const res =
            procedure.type === 'query'
              ? await call(tenant, 'GET', `/trpc/${procedure.path}?input=${input}`)
              : await call(tenant, 'POST', `/trpc/${procedure.path}`, {
                  json: procedure.input(other),
                });
          const status = (
            res.json?.['error'] as { json?: { data?: { httpStatus?: number } } } | undefined
          )?.json?.data?.httpStatus;
          check(
            tenant,
            `trpc ${procedure.path} (other)`,
            { ...res, status: status ?? res.status },
            404,
          );
        }
      }
      expect(leaks).toEqual([]);
      expect(results).toEqual(expected);

      // Nothing the other tenant tried changed the owner's data, aggregates included.
      expect(await ownerView('alice', fixtures.alice)).toEqual(before.alice);
      expect(await ownerView('bob', fixtures.bob)).toEqual(before.bob);

      // The same routes with the caller's own ids work: the 404s above are isolation.
      const ownResults: string[] = [];
      const ownExpected: string[] = [];
      for (const route of ROUTES.filter((r) => r.own !== 0)) {
        const req = route.request(fixtures.alice, fixtures.alice);
        const res = await call('alice', req.method, req.path, req.body);
        ownResults.push(`${route.name} -> ${res.status}`);
        ownExpected.push(`${route.name} -> ${route.own}`);
      }
      for (const procedure of PROCEDURES.filter((p) => p.type === 'query')) {
        const input = encodeURIComponent(JSON.stringify({ json: procedure.input(fixtures.alice) }));
        const res = await call('alice', 'GET', `/trpc/${procedure.path}?input=${input}`);
        ownResults.push(`trpc ${procedure.path} -> ${res.status}`);
        ownExpected.push(`trpc ${procedure.path} -> 200`);
      }
      expect(ownResults).toEqual(ownExpected);
      // The pause the other tenant could not touch is still there for its owner.
      const resumed = await fetch(
        `${server.url}/sessions/${fixtures.bob.hitlSession}/runs/${fixtures.bob.hitlRun}/resume`,
        {
          method: 'POST',
          headers: { ...auth('bob'), 'Content-Type': 'application/json' },
          body: JSON.stringify({
            decisions: [{ tool_call_id: fixtures.bob.hitlCall, type: 'approve' }],
          }),
        },
      );
      expect(resumed.status).toBe(200);
      expect(await resumed.text()).toContain('The tool said: approved');
    }, 300_000);
  },
);
