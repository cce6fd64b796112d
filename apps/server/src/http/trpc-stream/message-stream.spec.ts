import type { ApiServices, AppRouter } from '@cognition/api';
import { appRouter, createApiContext, resolveCaller } from '@cognition/api';
import type { CognitionClient } from '@cognition/client';
import { createCognitionClient, streamMessage } from '@cognition/client';
import type { AgentEventEnvelope } from '@cognition/contracts';
import { TRPCClientError } from '@trpc/client';
import { createExpressMiddleware } from '@trpc/server/adapters/express';
import express from 'express';
import { requestLogging } from '../request-log';
import superjson from 'superjson';
import { createLogger } from '../../cli/logger';
import type { TestApp } from '../../testing/test-app';
import { createTestApp } from '../../testing/test-app';
import type { Listening } from '../../testing/trpc-reference';
import {
  ALICE,
  AUTH,
  BOB,
  KEY,
  drain,
  failingAfter,
  loggedApp,
  listen,
  recordWrites,
  referenceApp,
  servicesOf,
  waitFor,
} from '../../testing/trpc-reference';
import { trpcMessageStreamMiddleware } from './message-stream';

const ROUTE = '/trpc/messages.stream?batch=1';

/** The request `httpBatchStreamLink` makes for one `messages.stream` call. */
async function post(
  base: string,
  body: string | ReadableStream<Uint8Array>,
  headers: Record<string, string>,
) {
  // A streamed body needs `duplex: 'half'` (undici).
  const init: RequestInit = {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'trpc-accept': 'application/jsonl', ...headers },
    body,
    ...(typeof body === 'string' ? {} : { duplex: 'half' as const }),
  };
  const res = await fetch(`${base}${ROUTE}`, init);
  return {
    status: res.status,
    headers: { 'content-type': res.headers.get('content-type'), vary: res.headers.get('vary') },
    text: await res.text(),
  };
}

/** `text` as a request body of unknown length (sent chunked, 100 bytes at a time). */
function streamOf(text: string): ReadableStream<Uint8Array> {
  const bytes = new TextEncoder().encode(text);
  let offset = 0;
  return new ReadableStream({
    pull(controller) {
      if (offset >= bytes.length) controller.close();
      else controller.enqueue(bytes.slice(offset, (offset += 100)));
    },
  });
}

function callBody(input: unknown): string {
  return JSON.stringify({ 0: superjson.serialize(input) });
}

let t: TestApp;
let ours: Listening;
let reference: Listening;
let alice: CognitionClient;
let sessionId: string;

beforeAll(async () => {
  t = await createTestApp(AUTH);
  ours = await listen(t.app);
  reference = await listen(referenceApp(servicesOf(t), AUTH));
  alice = createCognitionClient({
    url: `${ours.url}/trpc`,
    apiKey: KEY,
    scopes: { user: 'alice' },
  });
  sessionId = (await alice.sessions.create.mutate({ title: 'stream' })).id;
});

afterAll(async () => {
  await t.close();
  await ours.close();
  await reference.close();
});

afterEach(() => {
  jest.restoreAllMocks();
  // One model serves every test: a reply left behind would be the next test's.
  expect(t.model.untaken).toBe(0);
});

describe('POST /trpc/messages.stream through our JSON Lines writer', () => {
  it("writes tRPC's wire format byte for byte, one res.write per line", async () => {
    // A replayed idempotency key answers the same run both times (its events from the log).
    t.model.push({ text: ['Hel', 'lo'] });
    const body = callBody({ sessionId, content: 'hi', idempotencyKey: 'same-run' });
    const first = await post(ours.url, body, ALICE);
    expect(first.text).toContain('"type":"done"');
    const writes = recordWrites();
    const served = await post(ours.url, body, ALICE);
    writes.restore();
    const expected = await post(reference.url, body, ALICE);

    expect(served).toEqual(expected);
    expect(served.status).toBe(200);
    const lines = served.text.split(/(?<=\n)/);
    expect(lines[0]).toBe('{"json":{"0":[[0],[null,0,0]]}}\n');
    expect(lines.at(-1)).toBe('{"json":[3,0,[[]]]}\n');
    expect(lines.filter((line) => line.startsWith('{"json":[3,1,'))).toHaveLength(6);
    // The head is one write, the three result lines one, then one per event and the return.
    expect(writes.strings().join('')).toBe(served.text);
    expect(writes.strings()).toHaveLength(2 + 6 + 1);
  });

  it.each([
    ["another tenant's session (404)", BOB, () => ({ sessionId, content: 'x' }), 404],
    ['an unknown session (404)', ALICE, () => ({ sessionId: 'nope', content: 'x' }), 404],
    ['empty content (422)', ALICE, () => ({ sessionId, content: '' }), 422],
    ['an unknown input field (422)', ALICE, () => ({ sessionId, content: 'x', extra: 1 }), 422],
  ])('reports %s in the stream exactly like tRPC', async (_name, headers, inputOf, httpStatus) => {
    const body = callBody(inputOf());
    const served = await post(ours.url, body, headers);
    expect(served).toEqual(await post(reference.url, body, headers));
    const lines = served.text.trimEnd().split('\n');
    expect(lines).toHaveLength(2);
    const [, , [[value]]] = superjson.deserialize<[number, number, [[{ error: unknown }]]]>(
      JSON.parse(lines[1] ?? '') as never,
    );
    expect(value.error).toMatchObject({ data: { httpStatus } });
  });

  it('reports a run in progress (409) in the stream exactly like tRPC', async () => {
    t.model.push({ text: ['never'], hang: true });
    const callsBefore = t.model.calls.length;
    await alice.messages.send.mutate({ sessionId, content: 'hold the session' });
    try {
      const body = callBody({ sessionId, content: 'second' });
      const served = await post(ours.url, body, ALICE);
      expect(served).toEqual(await post(reference.url, body, ALICE));
      expect(served.text).toContain('"httpStatus":409');
    } finally {
      await waitFor(() => t.model.calls.length > callsBefore);
      await alice.runs.abort.mutate({ sessionId });
    }
  });

  it.each([
    ['a plain POST', '/trpc/messages.stream', {}, (body: unknown) => body],
    ['a batch without trpc-accept', ROUTE, {}, (body: unknown) => (body as unknown[])[0]],
    [
      'a batch accepting JSON only',
      ROUTE,
      { 'trpc-accept': 'application/json' },
      (body: unknown) => (body as unknown[])[0],
    ],
  ])(
    'refuses %s before the turn starts (415 naming trpc-accept)',
    async (_name, path, extra, callOf) => {
      // tRPC's adapter would store the message and start the run, then answer 415 naming nothing.
      const callsBefore = t.model.calls.length;
      const messagesBefore = (await alice.messages.list.query({ sessionId })).messages.length;
      const input = superjson.serialize({ sessionId, content: 'no stream to send it on' });
      const res = await fetch(`${ours.url}${path}`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', ...ALICE, ...extra },
        body: JSON.stringify(path === ROUTE ? { 0: input } : input),
      });
      expect(res.status).toBe(415);
      const { error } = callOf(await res.json()) as { error: unknown };
      expect(superjson.deserialize(error as never)).toMatchObject({
        data: {
          code: 'VALIDATION_ERROR',
          httpStatus: 415,
          path: 'messages.stream',
          errors: [{ path: '(header trpc-accept)' }],
        },
      });
      expect((await alice.messages.list.query({ sessionId })).messages.length).toBe(messagesBefore);
      expect(t.model.calls.length).toBe(callsBefore);
    },
  );

  it('leaves other calls to the tRPC adapter: no API key, two-call batches, bad JSON', async () => {
    const input = superjson.serialize({ sessionId, content: 'x' });
    const cases: [string, Record<string, string>][] = [
      [callBody({ sessionId, content: 'x' }), { 'X-Cognition-Scope-User': 'alice' }],
      [JSON.stringify({ 0: input, 1: input }), BOB],
      ['{nope', ALICE],
    ];
    for (const [body, headers] of cases) {
      const served = await post(ours.url, body, headers);
      expect(served).toEqual(await post(reference.url, body, headers));
      expect(served.text).not.toContain('"type":"done"');
    }
  });
});

describe('the typed client through our JSON Lines writer', () => {
  it('streams a turn in one request', async () => {
    t.model.push({ text: ['a', 'b', 'c'] });
    const before = ours.requests.length;
    const events = await drain(streamMessage(alice, { sessionId, content: 'abc' }));
    expect(events.map((e) => e.event.type)).toEqual([
      'status',
      'token',
      'token',
      'token',
      'usage',
      'status',
      'done',
    ]);
    expect(ours.requests.slice(before).map((r) => r.path)).toEqual([ROUTE]);
  });

  it('rejects with the send error, without a second request', async () => {
    const bob = createCognitionClient({
      url: `${ours.url}/trpc`,
      apiKey: KEY,
      scopes: { user: 'bob' },
    });
    const before = ours.requests.length;
    const error = await drain(streamMessage(bob, { sessionId, content: 'x' })).catch(
      (e: unknown) => e,
    );
    expect(error).toBeInstanceOf(TRPCClientError);
    expect((error as TRPCClientError<AppRouter>).data).toMatchObject({
      code: 'SESSION_NOT_FOUND',
      httpStatus: 404,
    });
    expect(ours.requests.slice(before)).toHaveLength(1);
  });

  it('releases the run subscription when the client leaves the loop early', async () => {
    // 50 tokens 100 ms apart: the run goes on long after the client left.
    t.model.push({ text: Array.from({ length: 50 }, (_, i) => `t${i}`), delayMs: 100 });
    const baseline = t.eventLog.openSubscriptions;
    for await (const envelope of streamMessage(alice, { sessionId, content: 'wait' })) {
      expect(t.eventLog.openSubscriptions).toBe(baseline + 1);
      if (envelope.event.type === 'token') break;
    }
    await waitFor(() => t.eventLog.openSubscriptions === baseline);
    await waitFor(() => ours.streams.size === 0);
    await alice.runs.abort.mutate({ sessionId });
  });
});

describe('the handler mounted on its own', () => {
  it('leaves a body over the limit to the adapter, which refuses it (413 in the stream)', async () => {
    const app = express();
    app.use(requestLogging(createLogger('silent')));
    const limits = { maxBodyBytes: 200 };
    app.use(
      '/trpc',
      trpcMessageStreamMiddleware({ auth: AUTH, services: servicesOf(t), ...limits }),
      createExpressMiddleware({
        router: appRouter,
        maxBodySize: limits.maxBodyBytes,
        createContext: ({ req }) =>
          createApiContext(servicesOf(t), resolveCaller(req.headers, AUTH), 'limits'),
      }),
    );
    const limited = await listen(app);
    try {
      // Just over the limit: past it only in the last chunk, so nothing is left unread.
      const body = callBody({ sessionId, content: 'x'.repeat(170) });
      expect(body.length).toBeGreaterThan(200);
      expect(body.length).toBeLessThan(300);
      const declared = await post(limited.url, body, ALICE);
      // Without a Content-Length: the handler reads past the limit, then hands the body back.
      const chunked = await post(limited.url, streamOf(body), ALICE);
      // tRPC reports it in the stream, as every error of a streamed batch.
      expect(declared.text).toContain('"code":"PAYLOAD_TOO_LARGE","httpStatus":413');
      expect(chunked).toEqual(declared);
    } finally {
      await limited.close();
    }
  });

  it('reports an error after events as an error line, like tRPC, and logs it', async () => {
    const [first] = await drain(await t.runs.events(sessionId, {}, {}));
    // A runtime whose stream fails after its first event (e.g. the event log's store went away).
    const failing = {
      ...t.runs,
      eventsOfRun: failingAfter(first as AgentEventEnvelope),
    } as unknown as ApiServices['runs'];
    const { app, lines } = loggedApp();
    app.use(
      '/trpc',
      trpcMessageStreamMiddleware({
        auth: AUTH,
        services: servicesOf(t, failing),
        maxBodyBytes: 1_000_000,
      }),
    );
    const served = await listen(app);
    const expected = await listen(referenceApp(servicesOf(t, failing), AUTH));
    try {
      const key = { idempotencyKey: 'failing-stream' };
      t.model.push({ text: ['x'] });
      await drain(streamMessage(alice, { sessionId, content: 'x', ...key }));
      const body = callBody({ sessionId, content: 'x', ...key });
      const text = (await post(served.url, body, ALICE)).text;
      expect(text).toBe((await post(expected.url, body, ALICE)).text);
      const last = text.trimEnd().split('\n').at(-1) ?? '';
      expect(last).toMatch(/^\{"json":\[3,2,\{.*"Internal server error"/);
      expect(last).not.toContain('/var/lib/x');
      expect(lines.join('')).toContain('tRPC procedure failed');
    } finally {
      await served.close();
      await expected.close();
    }
  });
});
