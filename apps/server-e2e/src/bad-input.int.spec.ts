import fc from 'fast-check';
import superjson from 'superjson';
import type { HttpResponse } from './testing/http';
import { http } from './testing/http';
import type { ServerProcess } from './testing/server-process';
import { startServerProcess, tempWorkspace } from './testing/server-process';

/**
 * Generated bad input over every route of the built server (SQLite): wrong types, missing fields,
 * huge strings, odd unicode, malformed JSON, unknown fields. Every answer must be a 4xx with a
 * message — never a 500, never a dropped connection — and the data already stored is unchanged.
 * Every generated request is invalid by construction, so no request may change anything.
 */
const SEED = 20261122;
const RUNS = 60;
const MAX_BODY = 256 * 1024;

const oddUnicode = fc.oneof(
  fc.string({ unit: 'grapheme', maxLength: 40 }),
  fc.string({ unit: 'binary', maxLength: 40 }),
  fc.constantFrom(
    '\u0000',
    '\uFEFF',
    '\u202Eevil',
    'e\u0301\u0301\u0301',
    '𝕏'.repeat(30),
    '\uD800',
    '\uDFFF\uD800',
    '../..',
    '%00',
    '😀\u200D😀',
  ),
);

const notAString = fc.oneof(
  fc.integer(),
  fc.boolean(),
  fc.constant(null),
  fc.array(fc.integer(), { maxLength: 3 }),
  fc.dictionary(fc.string({ maxLength: 5 }), fc.integer(), { maxKeys: 2 }),
);
const notAnObject = fc.oneof(
  fc.integer(),
  fc.boolean(),
  fc.string({ maxLength: 20 }),
  fc.array(fc.string({ maxLength: 5 }), { maxLength: 3 }),
);
const hugeString = fc.integer({ min: 201, max: 400_000 }).map((n) => 'x'.repeat(n));
const badAgentName = fc.oneof(
  fc.constant(''),
  oddUnicode.filter((s) => !/^[a-zA-Z0-9][a-zA-Z0-9_-]{0,63}$/.test(s)),
  fc.integer({ min: 65, max: 5000 }).map((n) => 'a'.repeat(n)),
  notAString,
);
const badConfig = fc.oneof(
  notAnObject,
  fc.record({
    temperature: fc.oneof(
      fc.double({ min: 2.0001, max: 1e9, noNaN: true }),
      fc.double({ max: -0.0001, min: -1e9, noNaN: true }),
      fc.string(),
    ),
  }),
  fc.record({
    max_tokens: fc.oneof(fc.constant(0), fc.double({ min: 0.1, max: 0.9 }), fc.string()),
  }),
  fc.record({ maxTokens: fc.integer({ min: 1, max: 10 }) }),
  fc.dictionary(
    oddUnicode.filter((k) => !['provider_id', 'model', 'temperature', 'max_tokens'].includes(k)),
    fc.string(),
    { minKeys: 1, maxKeys: 2 },
  ),
);
const badMetadata = fc.oneof(
  notAnObject,
  fc.dictionary(
    oddUnicode.filter((k) => k.length > 0 && k.length <= 128),
    notAString,
    { minKeys: 1, maxKeys: 3 },
  ),
  fc.record({ k: fc.integer({ min: 2049, max: 10_000 }).map((n) => 'v'.repeat(n)) }),
);
const unknownField = oddUnicode.filter(
  (k) =>
    ![
      'title',
      'agent_name',
      'metadata',
      'config',
      'status',
      'expected_version',
      '__proto__',
    ].includes(k),
);

/** A session body (create or patch) that is invalid in exactly one generated way. */
function badSessionBody(patch: boolean) {
  const validBase = fc.record({ title: fc.string({ maxLength: 50 }) }, { requiredKeys: [] });
  return fc.oneof(
    fc.record({
      title: fc.oneof(
        notAString.filter((v) => v !== null),
        hugeString,
      ),
    }),
    fc.record({ agent_name: badAgentName }),
    fc.record({ config: badConfig }),
    fc.record({ metadata: badMetadata }),
    fc
      .tuple(validBase, unknownField, fc.jsonValue())
      .map(([body, key, value]) => ({ ...body, [key]: value })),
    ...(patch
      ? [
          fc.record({
            status: fc.oneof(
              oddUnicode.filter(
                (s) => !['active', 'suspended', 'completed', 'failed', 'error'].includes(s),
              ),
              notAString,
            ),
          }),
          fc.record({
            expected_version: fc.oneof(
              fc.integer({ max: 0 }),
              fc.double({ min: 1.1, max: 9.9 }),
              fc.string({ maxLength: 3 }),
            ),
          }),
        ]
      : []),
  );
}

const BODY_FIELDS = new Set([
  'title',
  'agent_name',
  'metadata',
  'config',
  'status',
  'expected_version',
]);

const MESSAGE_FIELDS = [
  'content',
  'parent_id',
  'callback_url',
  'idempotency_key',
  'metadata',
  'multitask_strategy',
];

/** A message body invalid in exactly one generated way (a valid one would start a run). */
const badMessageBody = fc.oneof(
  fc.record({ content: fc.oneof(fc.constant(''), notAString) }),
  fc.record({
    content: fc.constant('hi'),
    callback_url: fc.oneof(
      fc.constantFrom(
        'ftp://example.com/hook',
        'javascript:alert(1)',
        'not a url',
        '',
        // Hosts inside the server's own network (refused by default).
        'http://127.0.0.1:8000/hook',
        'http://10.1.2.3/hook',
        'http://[::1]/hook',
        'http://169.254.169.254/latest/meta-data',
        'http://localhost/hook',
      ),
      notAString.filter((v) => v !== null),
    ),
  }),
  fc.record({ content: fc.constant('hi'), metadata: badMetadata }),
  fc.record({
    content: fc.constant('hi'),
    multitask_strategy: fc.oneof(
      fc.constantFrom('later', 'ENQUEUE', 'queue', ''),
      notAString.filter((v) => v !== null),
    ),
  }),
  fc.record({
    content: fc.constant('hi'),
    idempotency_key: fc.oneof(
      fc.constant(''),
      fc.integer({ min: 257, max: 2000 }).map((n) => 'k'.repeat(n)),
      notAString.filter((v) => v !== null),
    ),
  }),
  fc.record({
    content: fc.constant('hi'),
    parent_id: fc.oneof(
      fc.integer(),
      fc.constant(''),
      fc.integer({ min: 129, max: 1000 }).map((n) => 'p'.repeat(n)),
    ),
  }),
  fc
    .tuple(
      oddUnicode.filter((k) => !MESSAGE_FIELDS.includes(k) && k !== '__proto__'),
      fc.jsonValue(),
    )
    .map(([key, value]) => ({ content: 'hi', [key]: value })),
);

/** Raw text that is not a valid body: not JSON, not a JSON object, or an object with an unknown field. */
const malformedJson = fc
  .oneof(
    fc.json().map((s) => s.slice(0, Math.max(0, s.length - 1))),
    fc.string({ unit: 'binary', maxLength: 200 }),
    fc.constantFrom(
      '{',
      '{"title": }',
      "{'title': 'x'}",
      '{"title": "x",}',
      'null',
      '[]',
      '[1,2]',
      '"str"',
      '42',
      'true',
      '{"a":1}{"b":2}',
    ),
  )
  .filter((text) => {
    if (text.trim().length === 0) return false; // an empty body is a valid (empty) create
    try {
      const parsed: unknown = JSON.parse(text);
      if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) return true;
      return Object.keys(parsed).some((key) => !BODY_FIELDS.has(key));
    } catch {
      return true;
    }
  });

/** Percent-encodes every UTF-8 byte (encodeURIComponent throws on lone surrogates). */
function encodePathSegment(value: string): string {
  return Array.from(
    Buffer.from(value, 'utf8'),
    (byte) => `%${byte.toString(16).padStart(2, '0')}`,
  ).join('');
}

const badId = fc.oneof(
  fc.constant('missing-id'),
  fc.integer({ min: 129, max: 2000 }).map((n) => 'i'.repeat(n)),
  oddUnicode.filter((s) => s.length > 0),
);
const badQuery = fc.oneof(
  fc.record({
    limit: fc.oneof(fc.constantFrom('0', '-1', '501', '1e3', '1.5', 'abc', ''), oddUnicode),
  }),
  fc.record({ offset: fc.oneof(fc.constantFrom('-1', 'x', '9999999999'), oddUnicode) }),
  fc.record({
    status: oddUnicode.filter(
      (s) => !['active', 'suspended', 'completed', 'failed', 'error'].includes(s),
    ),
  }),
  fc
    .tuple(
      unknownField.filter(
        (k) =>
          k.length > 0 && !k.startsWith('metadata.') && !['limit', 'offset', 'status'].includes(k),
      ),
      fc.string({ maxLength: 10 }),
    )
    .map(([k, v]) => ({ [k]: v })),
);

function queryString(query: Record<string, string>): string {
  return new URLSearchParams(query).toString();
}

function expectRejected(res: HttpResponse, what: string): void {
  const ok = res.status >= 400 && res.status < 500;
  if (!ok) throw new Error(`${what} -> ${res.status} ${res.text.slice(0, 300)}`);
  const detail =
    res.json?.['detail'] ??
    (res.json?.['error'] as { json?: { message?: unknown } } | undefined)?.json?.message;
  if (typeof detail !== 'string' || detail.length === 0)
    throw new Error(`${what} -> ${res.status} without a message: ${res.text.slice(0, 300)}`);
}

describe('generated bad input against the built server', () => {
  let server: ServerProcess;
  let workspace: ReturnType<typeof tempWorkspace>;
  let sessionId: string;
  let before: unknown;

  async function stored(): Promise<unknown> {
    const sessions = await http(server.url, 'GET', '/sessions?limit=500');
    const messages = await http(server.url, 'GET', `/sessions/${sessionId}/messages?limit=500`);
    return { sessions: sessions.json, messages: messages.json };
  }

  beforeAll(async () => {
    workspace = tempWorkspace();
    server = await startServerProcess({
      COGNITION_WORKSPACE_ROOT: workspace.dir,
      COGNITION_MAX_BODY_BYTES: String(MAX_BODY),
    });
    const created = await http(server.url, 'POST', '/sessions', {
      body: { title: 'keep me', metadata: { k: 'v' } },
    });
    sessionId = String(created.json?.['id']);
    before = await stored();
  });

  afterAll(async () => {
    if (server) expect(await server.stop()).toBe(0);
    workspace?.remove();
  });

  afterEach(async () => {
    expect(await stored()).toEqual(before);
  });

  const params = { seed: SEED, numRuns: RUNS, endOnFailure: true };

  it('POST /sessions', async () => {
    await fc.assert(
      fc.asyncProperty(badSessionBody(false), async (body) => {
        expectRejected(
          await http(server.url, 'POST', '/sessions', { body }),
          `POST ${JSON.stringify(body).slice(0, 200)}`,
        );
      }),
      params,
    );
  });

  it('PATCH /sessions/{id}', async () => {
    await fc.assert(
      fc.asyncProperty(badSessionBody(true), async (body) => {
        expectRejected(
          await http(server.url, 'PATCH', `/sessions/${sessionId}`, { body }),
          `PATCH ${JSON.stringify(body).slice(0, 200)}`,
        );
      }),
      params,
    );
  });

  it('POST /sessions/{id}/messages and its Last-Event-ID', async () => {
    await fc.assert(
      fc.asyncProperty(badMessageBody, async (body) => {
        expectRejected(
          await http(server.url, 'POST', `/sessions/${sessionId}/messages`, { body }),
          `send ${JSON.stringify(body).slice(0, 200)}`,
        );
      }),
      params,
    );
    const cursors = fc.oneof(
      fc.constantFrom('nonsense', ':5', 'run_abc:', 'run:12x', 'run_unknown:000000001'),
      fc.integer({ min: 161, max: 4000 }).map((n) => `${'r'.repeat(n)}:1`),
    );
    await fc.assert(
      fc.asyncProperty(cursors, fc.boolean(), async (cursor, post) => {
        const headers = { 'Last-Event-ID': cursor };
        const res = post
          ? await http(server.url, 'POST', `/sessions/${sessionId}/messages`, {
              body: { content: 'hi' },
              headers,
            })
          : await http(server.url, 'GET', `/sessions/${sessionId}/events`, { headers });
        expectRejected(res, `${post ? 'POST' : 'GET'} Last-Event-ID ${cursor.slice(0, 60)}`);
      }),
      params,
    );
  });

  it('malformed JSON on every route with a body', async () => {
    await fc.assert(
      fc.asyncProperty(
        malformedJson,
        fc.constantFrom('POST /sessions', 'PATCH /sessions/{id}'),
        async (text, route) => {
          const [method = 'POST', path = '/sessions'] = route.replace('{id}', sessionId).split(' ');
          expectRejected(
            await http(server.url, method, path, { rawBody: text }),
            `${route} ${JSON.stringify(text).slice(0, 100)}`,
          );
        },
      ),
      params,
    );
  });

  it('bodies over the size limit', async () => {
    const big = JSON.stringify({ title: 'x', metadata: { blob: 'y'.repeat(MAX_BODY) } });
    for (const [method, path] of [
      ['POST', '/sessions'],
      ['PATCH', `/sessions/${sessionId}`],
      ['POST', '/trpc/sessions.create'],
    ] as const) {
      const res = await http(server.url, method, path, { rawBody: big });
      expect(res.status).toBe(413);
      expectRejected(res, `${method} ${path} oversized`);
    }
  });

  it('odd ids and queries on every read and delete route', async () => {
    await fc.assert(
      fc.asyncProperty(badId, badQuery, fc.nat(5), async (id, query, pick) => {
        const enc = encodePathSegment(id);
        const requests: [string, string][] = [
          ['GET', `/sessions/${enc}`],
          ['PATCH', `/sessions/${enc}`],
          ['DELETE', `/sessions/${enc}`],
          ['GET', `/sessions/${enc}/messages`],
          ['GET', `/sessions/${sessionId}/messages/${enc}`],
          ['GET', `/sessions?${queryString(query)}`],
        ];
        const [method, path] = requests[pick % requests.length] ?? ['GET', '/sessions/missing-id'];
        const res = await http(
          server.url,
          method,
          path,
          method === 'PATCH' ? { body: { title: 'x', unknown_field: 1 } } : {},
        );
        expectRejected(res, `${method} ${path.slice(0, 200)}`);
      }),
      params,
    );
    // Bad pagination of an existing session's messages.
    await fc.assert(
      fc.asyncProperty(
        badQuery.filter((q) => !('status' in q)),
        async (query) => {
          expectRejected(
            await http(server.url, 'GET', `/sessions/${sessionId}/messages?${queryString(query)}`),
            `messages ?${queryString(query)}`,
          );
        },
      ),
      params,
    );
  });

  it('the same bad input through /trpc', async () => {
    const camel = (body: Record<string, unknown>) =>
      Object.fromEntries(
        Object.entries(body).map(([k, v]) => [
          k === 'agent_name' ? 'agentName' : k === 'expected_version' ? 'expectedVersion' : k,
          v,
        ]),
      );
    await fc.assert(
      // `maxTokens` is the tRPC spelling, valid there: not bad input on this surface.
      fc.asyncProperty(
        badSessionBody(true).filter((b) => !JSON.stringify(b).includes('"maxTokens"')),
        fc.boolean(),
        async (body, create) => {
          const input =
            create && !('status' in body) && !('expected_version' in body)
              ? camel(body)
              : { id: sessionId, ...camel(body) };
          const res = await http(
            server.url,
            'POST',
            create ? '/trpc/sessions.create' : '/trpc/sessions.update',
            {
              rawBody: JSON.stringify(superjson.serialize(input)),
            },
          );
          expectRejected(res, `trpc ${JSON.stringify(input).slice(0, 200)}`);
        },
      ),
      params,
    );
    // Missing required fields.
    for (const [path, input] of [
      ['sessions.get', {}],
      ['sessions.update', { title: 'x' }],
      ['messages.get', { sessionId }],
      ['sessions.delete', null],
    ] as const) {
      const res = await http(
        server.url,
        'GET',
        `/trpc/${path}?input=${encodeURIComponent(JSON.stringify(superjson.serialize(input)))}`,
      );
      expectRejected(res, `trpc ${path} ${JSON.stringify(input)}`);
    }
  });
});
