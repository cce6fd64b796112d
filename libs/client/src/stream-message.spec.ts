import type { AppRouter } from '@cognition/api';
import type { TestApiServer } from '@cognition/api/testing';
import type { AgentEventEnvelope, Session } from '@cognition/contracts';
import { TRPCClientError } from '@trpc/client';
import type { CognitionClient } from './client';
import { createCognitionClient } from './client';
import type { TestBackend } from './testing/test-backend';
import { createTestBackend, startScopedApiServer } from './testing/test-backend';
import type { SendMessageResult } from './stream-message';
import { resumeRun, streamMessage } from './stream-message';

const API_KEY = 'sk-stream';

async function drain(stream: AsyncIterable<AgentEventEnvelope>): Promise<AgentEventEnvelope[]> {
  const out: AgentEventEnvelope[] = [];
  for await (const envelope of stream) out.push(envelope);
  return out;
}

/** The error a promise rejected with; fails the test when it resolved. */
async function rejectionOf(promise: Promise<unknown>): Promise<unknown> {
  return promise.then(
    () => {
      throw new Error('expected a rejection');
    },
    (error: unknown) => error,
  );
}

function tokens(events: AgentEventEnvelope[]): string {
  return events.map((e) => (e.event.type === 'token' ? e.event.content : '')).join('');
}

describe('streamMessage over HTTP', () => {
  let backend: TestBackend;
  let server: TestApiServer;
  let alice: CognitionClient;
  let session: Session;

  beforeAll(async () => {
    backend = await createTestBackend();
    server = await startScopedApiServer(backend, { id: 'stream', key: API_KEY });
    alice = createCognitionClient({ url: server.url, apiKey: API_KEY, scopes: { user: 'alice' } });
  });

  beforeEach(async () => {
    session = await alice.sessions.create.mutate({ title: 'streaming' });
  });

  afterEach(() => {
    // One model serves every test: a reply left behind would be the next test's.
    expect(backend.model.untaken).toBe(0);
  });

  afterAll(async () => {
    await server.close();
    await backend.cleanup();
  });

  it('sends and yields the run: tokens, then exactly one done, with the send result', async () => {
    backend.model.push({
      text: ['Hel', 'lo', ' world'],
      usage: { input_tokens: 5, output_tokens: 3 },
    });
    let sent: SendMessageResult | undefined;
    const stream = streamMessage(
      alice,
      { sessionId: session.id, content: 'greet me' },
      { onSent: (result) => (sent = result) },
    );
    const events: AgentEventEnvelope[] = [];
    let next = await stream.next();
    while (!next.done) {
      events.push(next.value);
      next = await stream.next();
    }
    expect(next.value).toEqual(sent);
    expect(sent?.created).toBe(true);
    expect(sent?.run.createdAt).toBeInstanceOf(Date);

    expect(events.map((e) => e.event.type)).toEqual([
      'status',
      'token',
      'token',
      'token',
      'usage',
      'status',
      'done',
    ]);
    expect(tokens(events)).toBe('Hello world');
    expect(events.every((e) => e.runId === sent?.run.id && e.sessionId === session.id)).toBe(true);
    expect(events[events.length - 1]?.event).toMatchObject({
      type: 'done',
      assistant_data: { content: 'Hello world', parent_id: sent?.message.id },
    });
  });

  it('resumes a dropped connection with the last event id, without gaps or duplicates', async () => {
    const letters = 'abcdefghijklmnop'.split('');
    backend.model.push({ text: letters, delayMs: 250 });
    const before = server.requests.length;
    const received: AgentEventEnvelope[] = [];
    let dropped = 0;
    for await (const envelope of streamMessage(alice, { sessionId: session.id, content: 'abc' })) {
      received.push(envelope);
      // Cut the wire after the second token; the run keeps going on the server meanwhile.
      if (dropped === 0 && received.filter((e) => e.event.type === 'token').length === 2) {
        dropped = server.dropStreams();
      }
    }
    expect(dropped).toBe(1);

    const reconnects = received.filter((e) => e.event.type === 'reconnected');
    expect(reconnects).toHaveLength(1);
    const marker = received.indexOf(reconnects[0] as AgentEventEnvelope);
    const lastBeforeDrop = received[marker - 1];
    expect(reconnects[0]?.event).toEqual({
      type: 'reconnected',
      last_event_id: lastBeforeDrop?.id,
      truncated: false,
    });

    const events = received.filter((e) => e.event.type !== 'reconnected');
    const runId = events[0]?.runId ?? '';
    const full = await drain(await backend.runs.events(session.id, {}, { runId }));
    expect(events).toEqual(full);
    expect(tokens(events)).toBe(letters.join(''));
    expect(new Set(events.map((e) => e.id)).size).toBe(events.length);
    expect(events[events.length - 1]?.event.type).toBe('done');

    // One request sent the message and streamed until the drop; the subscription resumed it.
    const requests = server.requests.slice(before);
    expect(requests.map((request) => request.path.split('?')[0])).toEqual([
      '/trpc/messages.stream',
      '/trpc/runs.events',
    ]);
    const resumed = requests[1];
    // The id travels in the subscription's input (superjson: `{ json: { ..., lastEventId } }`).
    const input = new URL(resumed?.path ?? '/', server.url).searchParams.get('input') ?? '{}';
    const resumedFrom = (JSON.parse(input) as { json?: { lastEventId?: string } }).json
      ?.lastEventId;
    expect(resumedFrom).toBe(lastBeforeDrop?.id);
    expect(resumed?.headers).toMatchObject({
      authorization: `Bearer ${API_KEY}`,
      'x-cognition-scope-user': 'alice',
    });
  }, 15_000);

  it('fails with 409 RUN_IN_PROGRESS while a run is active, and stops on abort', async () => {
    backend.model.push({ text: ['thinking'], hang: true });
    const controller = new AbortController();
    const first = streamMessage(
      alice,
      { sessionId: session.id, content: 'slow' },
      { signal: controller.signal },
    );
    expect((await first.next()).value).toMatchObject({ event: { type: 'status' } });
    // The model is called (aborted before that, the run would leave its reply to the next test).
    expect((await first.next()).value).toMatchObject({ event: { type: 'token' } });

    const busy = await rejectionOf(
      drain(streamMessage(alice, { sessionId: session.id, content: 'again' })),
    );
    expect(busy).toBeInstanceOf(TRPCClientError);
    expect((busy as TRPCClientError<AppRouter>).data).toMatchObject({
      code: 'RUN_IN_PROGRESS',
      httpStatus: 409,
    });

    controller.abort(new Error('user left'));
    const stopped = await rejectionOf(drain(first));
    expect(stopped).toEqual(new Error('user left'));

    const aborted = await alice.runs.abort.mutate({ sessionId: session.id });
    expect(aborted).toMatchObject({ aborted: true, run: { status: 'aborted' } });
  });

  it('yields the ABORTED terminal event when the run is aborted from elsewhere', async () => {
    backend.model.push({ text: ['partial'], hang: true });
    const events: AgentEventEnvelope[] = [];
    for await (const envelope of streamMessage(alice, { sessionId: session.id, content: 'x' })) {
      events.push(envelope);
      if (envelope.event.type === 'token') await alice.runs.abort.mutate({ sessionId: session.id });
    }
    expect(events[events.length - 1]?.event).toMatchObject({ type: 'error', code: 'ABORTED' });
  });

  it("rejects another tenant's session with NOT_FOUND, without retrying the subscription", async () => {
    backend.model.push({ text: 'private' });
    const done = await drain(streamMessage(alice, { sessionId: session.id, content: 'mine' }));
    const runId = done[0]?.runId ?? '';

    const bob = createCognitionClient({
      url: server.url,
      apiKey: API_KEY,
      scopes: { user: 'bob' },
    });
    const refused = await rejectionOf(
      drain(streamMessage(bob, { sessionId: session.id, content: 'let me in' })),
    );
    expect((refused as TRPCClientError<AppRouter>).data).toMatchObject({
      code: 'SESSION_NOT_FOUND',
      httpStatus: 404,
    });

    const before = server.requests.length;
    const failure = await new Promise<unknown>((resolve) => {
      const subscription = bob.runs.events.subscribe(
        { sessionId: session.id, runId },
        {
          onData: () => resolve(new Error('bob received an event')),
          onError: (error) => {
            subscription.unsubscribe();
            resolve(error);
          },
        },
      );
    });
    expect(failure).toBeInstanceOf(TRPCClientError);
    expect((failure as TRPCClientError<AppRouter>).data).toMatchObject({
      code: 'SESSION_NOT_FOUND',
    });
    expect(
      server.requests.slice(before).filter((r) => r.path.includes('runs.events')),
    ).toHaveLength(1);
  });

  it('ends at the interrupt of a run that waits for a decision, and resumeRun goes on from it', async () => {
    const gated = await alice.sessions.create.mutate({ title: 'gated', agentName: 'gated' });
    backend.model.push({ toolCalls: [{ name: 'execute', args: { command: 'ls' }, id: 'c1' }] });
    const first = await drain(streamMessage(alice, { sessionId: gated.id, content: 'list' }));
    const interrupt = first[first.length - 1];
    expect(interrupt?.event).toMatchObject({
      type: 'interrupt',
      tool_calls: [{ id: 'c1', name: 'execute', allowed: ['approve', 'reject'] }],
    });
    const runId = interrupt?.runId ?? '';
    const { runs } = await alice.runs.list.query({
      sessionId: gated.id,
      status: 'requires_action',
    });
    expect(runs.map((run) => run.id)).toEqual([runId]);

    const refused = await rejectionOf(
      drain(
        resumeRun(alice, {
          sessionId: gated.id,
          runId,
          decisions: [{ tool_call_id: 'c1', type: 'edit', args: { command: 'ls -la' } }],
        }),
      ),
    );
    expect(refused).toBeInstanceOf(TRPCClientError);
    expect((refused as TRPCClientError<AppRouter>).data?.code).toBe('VALIDATION_ERROR');

    backend.model.push({ text: 'Listed.' });
    const rest = await drain(
      resumeRun(alice, {
        sessionId: gated.id,
        runId,
        decisions: [{ tool_call_id: 'c1', type: 'approve' }],
      }),
    );
    expect(rest[0]?.event).toEqual({
      type: 'reconnected',
      last_event_id: interrupt?.id,
      truncated: false,
    });
    expect(rest.map((e) => e.event.type).slice(-2)).toEqual(['status', 'done']);
    expect(rest.every((e) => e.runId === runId)).toBe(true);
  });
});
