import type { AgentEventEnvelope, Session } from '@cognition/contracts';
import { AgentEventEnvelopeSchema, isTerminalEvent } from '@cognition/contracts';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { describeError, toHttpError } from '../../errors';
import type { ApiTestBed } from '../../testing/test-bed';
import { createApiTestBed, trpcErrorOf } from '../../testing/test-bed';

const ALICE = { user: 'alice' };
const BOB = { user: 'bob' };

type Caller = ReturnType<ApiTestBed['as']>;
type EventsInput = Parameters<Caller['runs']['events']>[0];

interface Received {
  /** The id tRPC tracks (sent as the SSE `id:` line). */
  trackedId: string;
  envelope: AgentEventEnvelope;
}

/**
 * The subscription's items as the server produces them: tRPC `tracked()` tuples
 * `[id, envelope, symbol]` (the client link unwraps them into `{ id, data }`).
 */
function received(item: unknown): Received {
  if (!Array.isArray(item)) throw new Error(`expected a tracked event, got ${String(item)}`);
  const [trackedId, envelope] = item as [unknown, unknown];
  if (typeof trackedId !== 'string') throw new Error('tracked event without id');
  return { trackedId, envelope: AgentEventEnvelopeSchema.parse(envelope) };
}

async function openEvents(caller: Caller, input: EventsInput): Promise<AsyncIterator<unknown>> {
  const stream = (await caller.runs.events(input)) as AsyncIterable<unknown>;
  return stream[Symbol.asyncIterator]();
}

/** Every event until the stream ends. */
async function events(caller: Caller, input: EventsInput): Promise<Received[]> {
  const stream = (await caller.runs.events(input)) as AsyncIterable<unknown>;
  const out: Received[] = [];
  for await (const item of stream) out.push(received(item));
  return out;
}

/** Reads from an open stream until `predicate` holds for an event (that event included). */
async function readUntil(
  iterator: AsyncIterator<unknown>,
  predicate: (envelope: AgentEventEnvelope) => boolean,
): Promise<Received[]> {
  const out: Received[] = [];
  for (;;) {
    const next = await iterator.next();
    if (next.done) throw new Error('the stream ended before the awaited event');
    const item = received(next.value);
    out.push(item);
    if (predicate(item.envelope)) return out;
  }
}

const types = (items: Received[]): string[] => items.map((i) => i.envelope.event.type);

describe('messages.send and runs.*', () => {
  let bed: ApiTestBed;
  let session: Session;

  beforeEach(async () => {
    bed = await createApiTestBed();
    session = await bed.as(ALICE).sessions.create({ title: 'run me' });
  });

  afterEach(async () => {
    await bed.cleanup();
  });

  it('sends a message and streams the run to exactly one terminal event', async () => {
    bed.model.push({ text: ['Hel', 'lo', '!'], usage: { input_tokens: 12, output_tokens: 3 } });
    const alice = bed.as(ALICE);
    const sent = await alice.messages.send({ sessionId: session.id, content: 'hi' });
    expect(sent.created).toBe(true);
    expect(sent.message).toMatchObject({ sessionId: session.id, role: 'user', content: 'hi' });
    expect(sent.run).toMatchObject({ sessionId: session.id, inputMessageId: sent.message.id });

    const items = await events(alice, { sessionId: session.id, runId: sent.run.id });
    expect(types(items)).toEqual(['status', 'token', 'token', 'token', 'usage', 'status', 'done']);
    expect(items.filter((i) => isTerminalEvent(i.envelope.event))).toHaveLength(1);
    for (const item of items) {
      expect(item.trackedId).toBe(item.envelope.id);
      expect(item.envelope.runId).toBe(sent.run.id);
    }
    const ids = items.map((i) => i.trackedId);
    expect([...ids].sort()).toEqual(ids);
    expect(new Set(ids).size).toBe(ids.length);
    const done = items[items.length - 1]?.envelope.event;
    expect(done).toMatchObject({
      type: 'done',
      assistant_data: { role: 'assistant', content: 'Hello!', parent_id: sent.message.id },
    });

    expect(await alice.runs.get({ sessionId: session.id, runId: sent.run.id })).toMatchObject({
      id: sent.run.id,
      status: 'completed',
      usage: { inputTokens: 12, outputTokens: 3, provider: 'fake' },
      callbackAttempts: [],
    });
    const { messages } = await alice.messages.list({ sessionId: session.id });
    expect(messages.map((m) => [m.role, m.content])).toEqual([
      ['user', 'hi'],
      ['assistant', 'Hello!'],
    ]);
  });

  it('follows the active run when no runId is given, and replays a finished run', async () => {
    bed.model.push({ text: ['a', 'b', 'c'], delayMs: 20 });
    const alice = bed.as(ALICE);
    const sent = await alice.messages.send({ sessionId: session.id, content: 'go' });
    const live = await events(alice, { sessionId: session.id });
    expect(types(live)).toEqual(['status', 'token', 'token', 'token', 'usage', 'status', 'done']);
    expect(live.every((i) => i.envelope.runId === sent.run.id)).toBe(true);

    const replayed = await events(alice, { sessionId: session.id, runId: sent.run.id });
    expect(replayed.map((i) => i.envelope)).toEqual(live.map((i) => i.envelope));
  });

  it('answers a concurrent send with 409 RUN_IN_PROGRESS, then aborts the run', async () => {
    bed.model.push({ text: ['partial answer'], hang: true });
    const alice = bed.as(ALICE);
    const sent = await alice.messages.send({ sessionId: session.id, content: 'long task' });
    const stream = await openEvents(alice, { sessionId: session.id, runId: sent.run.id });
    await readUntil(stream, (e) => e.event.type === 'token');

    const busy = await trpcErrorOf(
      alice.messages.send({ sessionId: session.id, content: 'again' }),
    );
    expect(busy.code).toBe('CONFLICT');
    expect(toHttpError(busy)).toEqual({
      status: 409,
      body: {
        code: 'RUN_IN_PROGRESS',
        detail: `A run is in progress on session ${session.id}: wait for its terminal event, abort it, or send with multitaskStrategy enqueue, interrupt or rollback`,
      },
    });
    // The losing send stored nothing.
    expect((await alice.messages.list({ sessionId: session.id })).total).toBe(1);

    const started = Date.now();
    const aborted = await alice.runs.abort({ sessionId: session.id });
    expect(Date.now() - started).toBeLessThan(1500);
    expect(aborted).toMatchObject({ aborted: true, run: { id: sent.run.id, status: 'aborted' } });
    const rest = await readUntil(stream, (e) => isTerminalEvent(e.event));
    expect(rest[rest.length - 1]?.envelope.event).toMatchObject({ type: 'error', code: 'ABORTED' });
    expect(await stream.next()).toEqual({ done: true, value: undefined });

    const { messages } = await alice.messages.list({ sessionId: session.id });
    expect(messages[1]).toMatchObject({
      role: 'assistant',
      content: 'partial answer',
      metadata: { aborted: 'true' },
    });
    expect(await alice.runs.abort({ sessionId: session.id })).toEqual({
      aborted: false,
      run: null,
    });

    // The session accepts the next message once the run ended.
    bed.model.push({ text: 'ok' });
    const next = await alice.messages.send({ sessionId: session.id, content: 'again' });
    expect(types(await events(alice, { sessionId: session.id, runId: next.run.id })).pop()).toBe(
      'done',
    );
  });

  it('enqueues a message sent with multitaskStrategy enqueue: queued first, then its own run', async () => {
    bed.model.push({ text: ['first answer'], hang: true });
    bed.model.push({ text: 'second answer' });
    const alice = bed.as(ALICE);
    const first = await alice.messages.send({ sessionId: session.id, content: 'first' });
    const stream = await openEvents(alice, { sessionId: session.id, runId: first.run.id });
    await readUntil(stream, (e) => e.event.type === 'token');
    const second = await alice.messages.send({
      sessionId: session.id,
      content: 'second',
      multitaskStrategy: 'enqueue',
    });
    expect(second.run).toMatchObject({ status: 'pending', multitaskStrategy: 'enqueue' });
    const secondEvents = events(alice, { sessionId: session.id, runId: second.run.id });
    await alice.runs.abort({ sessionId: session.id });
    const received = await secondEvents;
    expect(received[0]?.envelope.event).toEqual({
      type: 'queued',
      run_id: second.run.id,
      ahead: 1,
    });
    expect(types(received).pop()).toBe('done');
    const { messages } = await alice.messages.list({ sessionId: session.id });
    expect(messages.map((m) => `${m.role}:${m.content}`)).toEqual([
      'user:first',
      'assistant:first answer',
      'user:second',
      'assistant:second answer',
    ]);
  });

  it('returns the first run for a retried idempotency key without a second message', async () => {
    bed.model.push({ text: 'once' });
    const alice = bed.as(ALICE);
    const input = { sessionId: session.id, content: 'charge card', idempotencyKey: 'order-17' };
    const first = await alice.messages.send(input);
    await events(alice, { sessionId: session.id, runId: first.run.id });
    const retry = await alice.messages.send(input);
    expect(retry.created).toBe(false);
    expect(retry.run.id).toBe(first.run.id);
    expect(retry.run.status).toBe('completed');
    expect(retry.message.id).toBe(first.message.id);
    expect(bed.model.calls).toHaveLength(1);
    expect((await alice.runs.list({ sessionId: session.id })).runs).toHaveLength(1);
    expect((await alice.messages.list({ sessionId: session.id })).total).toBe(2);
  });

  it('resumes after lastEventId with exactly the missed events, replayed and live', async () => {
    const alice = bed.as(ALICE);
    bed.model.push({ text: ['one ', 'two ', 'three ', 'four'] });
    const finished = await alice.messages.send({ sessionId: session.id, content: 'count' });
    const all = await events(alice, { sessionId: session.id, runId: finished.run.id });
    const cut = all[2];
    if (!cut) throw new Error('expected at least three events');
    const resumed = await events(alice, {
      sessionId: session.id,
      runId: finished.run.id,
      lastEventId: cut.trackedId,
    });
    expect(resumed[0]?.envelope.event).toEqual({
      type: 'reconnected',
      last_event_id: cut.trackedId,
      truncated: false,
    });
    expect(resumed[0]?.trackedId).toBe(cut.trackedId);
    expect(resumed.slice(1).map((i) => i.envelope)).toEqual(all.slice(3).map((i) => i.envelope));

    // Live: drop the subscription mid-run, resume from the last id while tokens keep coming.
    bed.model.push({ text: ['a', 'b', 'c', 'd', 'e', 'f'], delayMs: 25 });
    const live = await alice.messages.send({ sessionId: session.id, content: 'letters' });
    const first = await openEvents(alice, { sessionId: session.id, runId: live.run.id });
    const seen = await readUntil(first, (e) => e.event.type === 'token');
    await first.return?.();
    const last = seen[seen.length - 1];
    if (!last) throw new Error('no event before the drop');
    const after = await events(alice, {
      sessionId: session.id,
      runId: live.run.id,
      lastEventId: last.trackedId,
    });
    expect(after[0]?.envelope.event.type).toBe('reconnected');
    const stitched = [...seen, ...after.slice(1)].map((i) => i.envelope);
    const full = await events(alice, { sessionId: session.id, runId: live.run.id });
    expect(stitched).toEqual(full.map((i) => i.envelope));
    const text = stitched.map((e) => (e.event.type === 'token' ? e.event.content : '')).join('');
    expect(text).toBe('abcdef');
  });

  it('lists runs newest first and records completion-callback attempts', async () => {
    const received: string[] = [];
    const receiver = createServer((req, res) => {
      let body = '';
      req.on('data', (chunk: Buffer) => (body += chunk.toString()));
      req.on('end', () => {
        received.push(body);
        res.writeHead(204).end();
      });
    });
    await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', resolve));
    try {
      const callbackUrl = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/hook`;
      const alice = bed.as(ALICE);
      bed.model.push({ text: 'first' }, { text: 'second' });
      const one = await alice.messages.send({ sessionId: session.id, content: '1' });
      await events(alice, { sessionId: session.id, runId: one.run.id });
      const two = await alice.messages.send({ sessionId: session.id, content: '2', callbackUrl });
      await events(alice, { sessionId: session.id, runId: two.run.id });

      const { runs } = await alice.runs.list({ sessionId: session.id });
      expect(runs.map((r) => r.id)).toEqual([two.run.id, one.run.id]);
      expect(runs.every((r) => r.status === 'completed')).toBe(true);

      const deadline = Date.now() + 5000;
      let detail = await alice.runs.get({ sessionId: session.id, runId: two.run.id });
      while (detail.callbackAttempts.length === 0 && Date.now() < deadline) {
        await new Promise((resolve) => setTimeout(resolve, 20));
        detail = await alice.runs.get({ sessionId: session.id, runId: two.run.id });
      }
      expect(detail.callbackAttempts).toEqual([
        expect.objectContaining({ runId: two.run.id, url: callbackUrl, attempt: 1, ok: true }),
      ]);
      expect(JSON.parse(received[0] ?? '{}')).toMatchObject({
        run_id: two.run.id,
        status: 'completed',
        output: 'second',
      });

      const other = await alice.sessions.create({});
      const wrongSession = await trpcErrorOf(
        alice.runs.get({ sessionId: other.id, runId: two.run.id }),
      );
      expect(toHttpError(wrongSession)).toEqual({
        status: 404,
        body: { code: 'RUN_NOT_FOUND', detail: `Run not found: ${two.run.id}` },
      });
      const unknownRun = await trpcErrorOf(
        alice.runs.events({ sessionId: session.id, runId: 'run_missing' }),
      );
      expect(describeError(unknownRun).code).toBe('RUN_NOT_FOUND');
    } finally {
      receiver.closeAllConnections();
      await new Promise<void>((resolve) => receiver.close(() => resolve()));
    }
  });

  it('rejects bad messages with 422 naming the field and suspended sessions with 409', async () => {
    const alice = bed.as(ALICE);
    const cases: [Record<string, unknown>, string][] = [
      [{ content: '' }, 'content'],
      [{ content: 'x', callbackUrl: 'ftp://example.com/x' }, 'callbackUrl'],
      [{ content: 'x', parentId: 'no-such-message' }, 'parentId'],
      [{ content: 'x', metadata: { k: 1 } }, 'metadata.k'],
      [{ content: 'x', runId: 'chosen' }, '(root)'],
    ];
    for (const [fields, path] of cases) {
      const error = await trpcErrorOf(
        alice.messages.send({ sessionId: session.id, ...fields } as never),
      );
      const { status, body } = toHttpError(error);
      expect(status).toBe(422);
      expect(body.errors?.map((issue) => issue.path)).toEqual([path]);
    }
    await alice.sessions.update({ id: session.id, status: 'suspended' });
    const suspended = await trpcErrorOf(
      alice.messages.send({ sessionId: session.id, content: 'x' }),
    );
    expect(toHttpError(suspended)).toMatchObject({ status: 409, body: { code: 'CONFLICT' } });
    expect(toHttpError(suspended).body.detail).toContain('suspended');
    expect((await alice.messages.list({ sessionId: session.id })).total).toBe(0);
    expect(bed.model.calls).toHaveLength(0);
  });

  it('cancels the run and releases the sandbox when the session is deleted', async () => {
    bed.model.push({ text: ['working'], hang: true });
    const alice = bed.as(ALICE);
    const sent = await alice.messages.send({ sessionId: session.id, content: 'busy' });
    const stream = await openEvents(alice, { sessionId: session.id, runId: sent.run.id });
    await readUntil(stream, (e) => e.event.type === 'token');

    expect(await alice.sessions.delete({ id: session.id })).toEqual({ deleted: true });
    const rest = await readUntil(stream, (e) => isTerminalEvent(e.event));
    expect(rest[rest.length - 1]?.envelope.event).toMatchObject({ type: 'error', code: 'ABORTED' });
    expect(bed.released).toEqual([session.id]);
    expect(bed.sandbox.released).toContain(session.id);
    expect(bed.runs.activeRunIds()).toEqual([]);
    expect(await bed.storage.sessions.get(session.id, {})).toBeNull();
  });

  it("treats another tenant's session as missing on every run procedure", async () => {
    bed.model.push({ text: 'mine' });
    const alice = bed.as(ALICE);
    const sent = await alice.messages.send({ sessionId: session.id, content: 'secret' });
    await events(alice, { sessionId: session.id, runId: sent.run.id });

    const bob = bed.as(BOB);
    const attempts: Promise<unknown>[] = [
      bob.messages.send({ sessionId: session.id, content: 'intrude' }),
      bob.runs.abort({ sessionId: session.id }),
      bob.runs.list({ sessionId: session.id }),
      bob.runs.get({ sessionId: session.id, runId: sent.run.id }),
      bob.runs.events({ sessionId: session.id }),
      bob.runs.events({ sessionId: session.id, runId: sent.run.id }),
      bob.runs.events({ sessionId: session.id, lastEventId: `${sent.run.id}:000000001` }),
      bob.sessions.delete({ id: session.id }),
    ];
    for (const attempt of attempts) {
      const error = await trpcErrorOf(attempt);
      expect(error.code).toBe('NOT_FOUND');
      expect(toHttpError(error).body.detail).toBe(`Session not found: ${session.id}`);
    }
    expect((await alice.messages.list({ sessionId: session.id })).total).toBe(2);
    expect(bed.released).toEqual([]);
    expect(bed.model.calls).toHaveLength(1);
  });

  it('lists the runtime breakers in health.get next to the others, once per name', async () => {
    bed.model.push({ text: 'hi' });
    const alice = bed.as(ALICE);
    const sent = await alice.messages.send({ sessionId: session.id, content: 'x' });
    await events(alice, { sessionId: session.id, runId: sent.run.id });
    const fromRuntime = bed.runs.breakerSnapshots();
    const [llm] = fromRuntime;
    if (!llm) throw new Error('expected the runtime to have an LLM breaker');
    expect(fromRuntime.map((b) => b.name)).toEqual(['llm:fake']);
    // A server sharing one registry reports the runtime's breaker through both sources.
    bed.breakerSnapshots.push(
      { ...llm, state: 'OPEN' },
      { ...llm, name: 'sandbox:docker', totalCalls: 0 },
    );
    const report = await alice.health.get();
    expect(report.circuitBreakers.map((b) => [b.name, b.state])).toEqual([
      ['llm:fake', 'CLOSED'],
      ['sandbox:docker', 'CLOSED'],
    ]);
    expect(report.status).toBe('healthy');
  });
});
