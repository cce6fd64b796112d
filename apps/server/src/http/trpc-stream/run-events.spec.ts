import type { ApiServices, AppRouter } from '@cognition/api';
import type { CognitionClient } from '@cognition/client';
import { createCognitionClient, streamMessage } from '@cognition/client';
import type { AgentEventEnvelope } from '@cognition/contracts';
import { TRPCClientError } from '@trpc/client';
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
import { trpcRunEventsMiddleware } from './run-events';

const RUN_EVENTS_ROUTE = '/trpc/runs.events';

/** Whole SSE frames among the strings `res.write` received. */
function sseFrames(writes: ReturnType<typeof recordWrites>): string[] {
  return writes
    .strings()
    .filter((chunk) => /^(event|data): /.test(chunk) && chunk.endsWith('\n\n\n'));
}

function eventsPath(input: unknown): string {
  return `${RUN_EVENTS_ROUTE}?input=${encodeURIComponent(JSON.stringify(superjson.serialize(input)))}`;
}

const COMPARED_HEADERS = ['content-type', 'cache-control', 'vary', 'x-accel-buffering'];

async function raw(base: string, path: string, headers: Record<string, string> = {}) {
  const res = await fetch(`${base}${path}`, { headers });
  return {
    status: res.status,
    headers: Object.fromEntries(COMPARED_HEADERS.map((name) => [name, res.headers.get(name)])),
    text: await res.text(),
  };
}

/** Reads an SSE body until `text` contains `marker`, then drops the connection. */
async function readUntil(
  url: string,
  headers: Record<string, string>,
  marker: string,
): Promise<string> {
  const controller = new AbortController();
  const res = await fetch(url, { headers, signal: controller.signal });
  const reader = (res.body as ReadableStream<Uint8Array>).getReader();
  const decoder = new TextDecoder();
  let text = '';
  while (!text.includes(marker)) {
    const { value, done } = await reader.read();
    if (done) throw new Error(`stream ended before ${JSON.stringify(marker)}: ${text}`);
    text += decoder.decode(value, { stream: true });
  }
  controller.abort();
  return text;
}

/** The first error a subscription reports (it must report one, and no data). */
function subscriptionError(client: CognitionClient, input: unknown): Promise<unknown> {
  return new Promise((resolve) => {
    const subscription = client.runs.events.subscribe(input as { sessionId: string }, {
      onData: () => resolve(new Error('unexpected data')),
      onError: (error) => {
        subscription.unsubscribe();
        resolve(error);
      },
    });
  });
}

let t: TestApp;
let ours: Listening;
let reference: Listening;
let alice: CognitionClient;
let sessionId: string;
let finishedRunId: string;

beforeAll(async () => {
  t = await createTestApp(AUTH);
  ours = await listen(t.app);
  reference = await listen(referenceApp(servicesOf(t), AUTH));
  alice = createCognitionClient({
    url: `${ours.url}/trpc`,
    apiKey: KEY,
    scopes: { user: 'alice' },
  });
  const session = await alice.sessions.create.mutate({ title: 'events' });
  sessionId = session.id;
  t.model.push({ text: ['Hel', 'lo', ' there'] });
  const events = await drain(streamMessage(alice, { sessionId, content: 'hi' }));
  finishedRunId = events[0]?.runId ?? '';
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

/**
 * A resumed stream's `reconnected` envelope is written when the stream opens, so its `at` is the
 * one part of two reads of the same cursor that differs (stored events keep their times).
 */
function openedAtMasked<T extends { text: string }>(read: T): T {
  return {
    ...read,
    text: read.text.replace(/"at":"[^"]+"(?=,"event":\{"type":"reconnected")/g, '"at":"(opened)"'),
  };
}

describe('GET /trpc/runs.events through our SSE writer', () => {
  it("writes tRPC's wire format byte for byte, one res.write per frame", async () => {
    const path = eventsPath({ sessionId, runId: finishedRunId });
    const writes = recordWrites();
    const served = await raw(ours.url, path, ALICE);
    writes.restore();
    const expected = await raw(reference.url, path, ALICE);

    expect(served).toEqual(expected);
    expect(served.status).toBe(200);
    const frames = served.text.split(/(?<=\n\n\n)/);
    expect(frames[0]).toBe('event: connected\ndata: {"reconnectAfterInactivityMs":45000}\n\n\n');
    expect(frames.at(-1)).toBe('event: return\ndata: \n\n\n');
    expect(frames[1]).toMatch(
      new RegExp(`^data: \\{"json":.*\\}\\nid: ${finishedRunId}:\\d+\\n\\n\\n$`),
    );
    expect(sseFrames(writes)).toEqual(frames);
  });

  it('resumes after Last-Event-ID (header or input) exactly like tRPC', async () => {
    const full = await raw(ours.url, eventsPath({ sessionId, runId: finishedRunId }), ALICE);
    const cut = /\nid: (\S+)\n/.exec(full.text.split(/(?<=\n\n\n)/)[2] ?? '')?.[1] ?? '';
    expect(cut).toMatch(/^run_/);
    const byInput = eventsPath({ sessionId, runId: finishedRunId, lastEventId: cut });
    const byHeader = eventsPath({ sessionId, runId: finishedRunId });
    for (const [path, headers] of [
      [byInput, ALICE],
      [byHeader, { ...ALICE, 'Last-Event-ID': cut }],
      [`${byHeader}&lastEventId=${encodeURIComponent(cut)}`, ALICE],
    ] as const) {
      const writes = recordWrites();
      const served = await raw(ours.url, path, headers);
      writes.restore();
      expect(sseFrames(writes).join('')).toBe(served.text);
      expect(openedAtMasked(served)).toEqual(
        openedAtMasked(await raw(reference.url, path, headers)),
      );
      // The events after the second one, behind a `reconnected` event that carries its id.
      const dataFrames = (text: string) =>
        text.split('\n\n\n').filter((f) => f.startsWith('data: '));
      const resumed = dataFrames(served.text);
      expect(resumed[0]).toMatch(new RegExp(`"type":"reconnected".*\\nid: ${cut}$`, 's'));
      expect(resumed.slice(1)).toEqual(dataFrames(full.text).slice(2));
    }
  });

  // Paths are built in the test: `sessionId` exists only once beforeAll ran.
  it.each([
    [
      'no API key (401)',
      () => eventsPath({ sessionId }),
      { 'X-Cognition-Scope-User': 'alice' },
      401,
    ],
    [
      'no scope header (403)',
      () => eventsPath({ sessionId }),
      { Authorization: `Bearer ${KEY}` },
      403,
    ],
    ["another tenant's session (404)", () => eventsPath({ sessionId }), BOB, 404],
    ['an unknown session (404)', () => eventsPath({ sessionId: 'sess_missing' }), ALICE, 404],
    ['an empty session id (422)', () => eventsPath({ sessionId: '' }), ALICE, 422],
    ['an unknown input field (422)', () => eventsPath({ sessionId, extra: 1 }), ALICE, 422],
    ['malformed input JSON (400)', () => `${RUN_EVENTS_ROUTE}?input=%7Bnope`, ALICE, 400],
  ])('reports %s in the stream exactly like tRPC', async (_name, pathOf, headers, httpStatus) => {
    const path = pathOf();
    const writes = recordWrites();
    const served = await raw(ours.url, path, headers);
    writes.restore();
    expect(served).toEqual(await raw(reference.url, path, headers));
    const [connected, error, rest] = served.text.split(/(?<=\n\n\n)/);
    expect(connected).toMatch(/^event: connected\n/);
    expect(error).toMatch(/^event: serialized-error\ndata: /);
    expect(rest).toBeUndefined();
    const shape = superjson.deserialize<{ data: { httpStatus: number; stack?: string } }>(
      JSON.parse((error ?? '').slice('event: serialized-error\ndata: '.length)) as never,
    );
    expect(shape.data.httpStatus).toBe(httpStatus);
    expect(shape.data.stack).toBeUndefined();
    expect(sseFrames(writes)).toHaveLength(2);
  });

  it('leaves HEAD and batched requests to the tRPC adapter', async () => {
    const head = await fetch(`${ours.url}${eventsPath({ sessionId })}`, {
      method: 'HEAD',
      headers: ALICE,
    });
    expect(head.status).toBe(204);
    const batched = `/trpc/runs.events?batch=1&input=${encodeURIComponent('{"0":{"json":{}}}')}`;
    const served = await raw(ours.url, batched, ALICE);
    const expected = await raw(reference.url, batched, ALICE);
    // A JSON answer: only the SSE headers are the handler's to match, so compare the answer.
    expect([served.status, served.text]).toEqual([expected.status, expected.text]);
    expect(served.status).toBe(400);
  });
});

describe('the typed client through our SSE writer', () => {
  it('resumes dropped connections with no gap and no duplicate', async () => {
    const letters = 'abcdefghijkl'.split('');
    t.model.push({ text: letters, delayMs: 60 });
    const writes = recordWrites();
    const before = ours.requests.length;
    const received: AgentEventEnvelope[] = [];
    const dropped: number[] = [];
    // The first cut breaks `messages.stream` (the client goes on with `runs.events`), the
    // second one that subscription (the subscription link resumes it).
    const cutAt = [2, 5];
    for await (const envelope of streamMessage(alice, { sessionId, content: 'abc' })) {
      received.push(envelope);
      const tokens = received.filter((e) => e.event.type === 'token').length;
      if (tokens === cutAt[dropped.length]) {
        dropped.push(ours.streams.size);
        for (const socket of ours.streams) socket.destroy();
      }
    }
    expect(dropped).toEqual([1, 1]);

    const reconnects = received.filter((e) => e.event.type === 'reconnected');
    expect(reconnects).toHaveLength(2);
    for (const reconnect of reconnects) {
      const marker = received.indexOf(reconnect);
      expect(reconnect.event).toEqual({
        type: 'reconnected',
        last_event_id: received[marker - 1]?.id,
        truncated: false,
      });
    }
    const events = received.filter((e) => e.event.type !== 'reconnected');
    const runId = events[0]?.runId ?? '';
    const full = await drain(await t.runs.events(sessionId, {}, { runId }));
    expect(events).toEqual(full);
    expect(new Set(events.map((e) => e.id)).size).toBe(events.length);

    const paths = ours.requests.slice(before).map((request) => request.path.split('?')[0]);
    expect(paths).toEqual(['/trpc/messages.stream', RUN_EVENTS_ROUTE, RUN_EVENTS_ROUTE]);
    // Every event the client received was written by a hand-written handler as one whole
    // JSON line or SSE frame (one written just before a cut may never have arrived).
    const eventLines = writes.strings().filter((chunk) => chunk.startsWith('{"json":[3,1,'));
    const dataFrames = sseFrames(writes).filter((frame) => frame.startsWith('data: '));
    expect(eventLines.length + dataFrames.length).toBeGreaterThanOrEqual(received.length);
  }, 15_000);

  it('rejects with 401, 403, 404 and 422 as before, without retrying', async () => {
    const cases: [CognitionClient, unknown, string, number][] = [
      [
        createCognitionClient({ url: `${ours.url}/trpc`, scopes: { user: 'alice' } }),
        { sessionId },
        'UNAUTHORIZED',
        401,
      ],
      [
        createCognitionClient({ url: `${ours.url}/trpc`, apiKey: KEY }),
        { sessionId },
        'FORBIDDEN',
        403,
      ],
      [
        createCognitionClient({ url: `${ours.url}/trpc`, apiKey: KEY, scopes: { user: 'bob' } }),
        { sessionId },
        'SESSION_NOT_FOUND',
        404,
      ],
      [alice, { sessionId: '' }, 'VALIDATION_ERROR', 422],
    ];
    for (const [client, input, code, httpStatus] of cases) {
      const before = ours.requests.length;
      const writes = recordWrites();
      const error = await subscriptionError(client, input);
      writes.restore();
      expect(error).toBeInstanceOf(TRPCClientError);
      expect((error as TRPCClientError<AppRouter>).data).toMatchObject({ code, httpStatus });
      expect(sseFrames(writes).some((frame) => frame.startsWith('event: serialized-error'))).toBe(
        true,
      );
      expect(ours.requests.slice(before)).toHaveLength(1);
    }
  });

  it('releases the subscription when the client unsubscribes or the connection drops', async () => {
    t.model.push({ text: ['never'], hang: true });
    const callsBefore = t.model.calls.length;
    const sent = await alice.messages.send.mutate({ sessionId, content: 'wait' });
    const baseline = t.eventLog.openSubscriptions;
    const writes = recordWrites();

    const first = await new Promise<{ unsubscribe(): void }>((resolve) => {
      const subscription = alice.runs.events.subscribe(
        { sessionId, runId: sent.run.id },
        { onData: () => resolve(subscription) },
      );
    });
    expect(t.eventLog.openSubscriptions).toBe(baseline + 1);
    first.unsubscribe();
    await waitFor(() => t.eventLog.openSubscriptions === baseline);

    await readUntil(`${ours.url}${eventsPath({ sessionId, runId: sent.run.id })}`, ALICE, '\nid: ');
    await waitFor(() => t.eventLog.openSubscriptions === baseline);
    writes.restore();
    // Both streams were ours: each wrote its connected frame and its first event as whole frames.
    expect(sseFrames(writes).filter((frame) => frame.includes('"type":"status"'))).toHaveLength(2);

    await waitFor(() => t.model.calls.length > callsBefore);
    await alice.runs.abort.mutate({ sessionId });
  });
});

describe('the handler mounted on its own', () => {
  it('sends tRPC ping events while the run is quiet', async () => {
    const app = express();
    app.use(requestLogging(createLogger('silent')));
    app.use(
      '/trpc',
      trpcRunEventsMiddleware({
        auth: AUTH,
        services: servicesOf(t),
        sse: {
          ping: { enabled: true, intervalMs: 30 },
          client: { reconnectAfterInactivityMs: 90 },
        },
      }),
    );
    const pinging = await listen(app);
    try {
      t.model.push({ text: ['never'], hang: true });
      const callsBefore = t.model.calls.length;
      const sent = await alice.messages.send.mutate({ sessionId, content: 'quiet' });
      const text = await readUntil(
        `${pinging.url}${eventsPath({ sessionId, runId: sent.run.id })}`,
        ALICE,
        'event: ping\n',
      );
      const frames = text.split(/(?<=\n\n\n)/);
      expect(frames[0]).toBe('event: connected\ndata: {"reconnectAfterInactivityMs":90}\n\n\n');
      expect(frames[1]).toMatch(/^data: .*"status".*\nid: run_/s);
      expect(frames).toContain('event: ping\ndata: \n\n\n');
      await waitFor(() => t.model.calls.length > callsBefore);
      await alice.runs.abort.mutate({ sessionId });
    } finally {
      await pinging.close();
    }
  });

  it('reports an error after events as a serialized-error event, like tRPC, and logs it', async () => {
    const [first] = await drain(await t.runs.events(sessionId, {}, { runId: finishedRunId }));
    // A runtime whose stream fails after its first event (e.g. the event log's store went away).
    const failing = {
      ...t.runs,
      events: failingAfter(first as AgentEventEnvelope),
    } as unknown as ApiServices['runs'];
    const { app, lines } = loggedApp();
    app.use('/trpc', trpcRunEventsMiddleware({ auth: AUTH, services: servicesOf(t, failing) }));
    const served = await listen(app);
    const expected = await listen(referenceApp(servicesOf(t, failing), AUTH));
    try {
      const path = eventsPath({ sessionId, runId: finishedRunId });
      const text = (await raw(served.url, path, ALICE)).text;
      expect(text).toBe((await raw(expected.url, path, ALICE)).text);
      const frames = text.split(/(?<=\n\n\n)/);
      expect(frames).toHaveLength(3);
      expect(frames[1]).toMatch(/^data: .*\nid: run_/s);
      expect(frames[2]).toMatch(/^event: serialized-error\ndata: .*"Internal server error"/);
      expect(frames[2]).not.toContain('/var/lib/x');
      expect(lines.join('')).toContain('tRPC procedure failed');
    } finally {
      await served.close();
      await expected.close();
    }
  });
});
