import type { TestApp } from '../../../testing/test-app';
import type { ListeningTestApp } from '../../../testing/listen';
import { listenTestApp } from '../../../testing/listen';
import { eventsOf, readSse, timesOf } from '@cognition/runtime/testing/http';

type Json = Record<string, unknown>;

let served: ListeningTestApp;
let t: TestApp;
let base: string;

beforeAll(async () => {
  served = await listenTestApp({ sse: { retryMs: 1234, heartbeatMs: 40 } });
  ({ t, base } = served);
});

afterAll(() => served.close());

afterEach(() => {
  // One model serves every test: a reply left behind would be the next test's.
  expect(t.model.untaken).toBe(0);
});

async function newSession(body: Json = {}): Promise<string> {
  const res = await fetch(`${base}/sessions`, { method: 'POST', body: JSON.stringify(body) });
  expect(res.status).toBe(201);
  return String(((await res.json()) as Json).id);
}

function send(sessionId: string, body: Json, headers: Record<string, string> = {}) {
  return fetch(`${base}/sessions/${sessionId}/messages`, {
    method: 'POST',
    headers: { 'Content-Type': 'application/json', ...headers },
    body: JSON.stringify(body),
  });
}

async function json(res: Response): Promise<Json> {
  return (await res.json()) as Json;
}

async function waitFor(check: () => boolean | Promise<boolean>, ms = 3000): Promise<void> {
  const until = Date.now() + ms;
  while (!(await check())) {
    if (Date.now() > until) throw new Error('condition not met in time');
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}

describe('POST /sessions/{id}/messages (SSE)', () => {
  it('streams the run: retry hint, id/event/data frames, SSE headers, ends after done', async () => {
    const id = await newSession();
    t.model.push({ text: ['Hel', 'lo'], usage: { input_tokens: 7, output_tokens: 2 } });
    const res = await send(id, { content: 'hi', metadata: { source: 'spec' } });
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toBe('text/event-stream');
    expect(res.headers.get('cache-control')).toBe('no-cache');
    expect(res.headers.get('x-accel-buffering')).toBe('no');
    expect(res.headers.get('connection')).toBe('keep-alive');
    const runId = res.headers.get('x-cognition-run-id');
    expect(runId).toMatch(/^run_/);
    const { frames } = await readSse(res);
    expect(frames[0]).toEqual({ retry: 1234 });
    const events = eventsOf(frames);
    expect(events.map((e) => e.event)).toEqual([
      'status',
      'token',
      'token',
      'usage',
      'status',
      'done',
    ]);
    expect(events.every((e) => e.id.startsWith(`${runId}:`))).toBe(true);
    // Every frame carries when its event was emitted.
    const times = timesOf(frames).map((e) => e.at ?? '');
    expect(times).toHaveLength(events.length);
    expect(times.every((at) => !Number.isNaN(Date.parse(at)))).toBe(true);
    expect(events[1]?.data).toEqual({ content: 'Hel' });
    expect(events[3]?.data).toMatchObject({ input_tokens: 7, output_tokens: 2, provider: 'fake' });
    const done = events[5]?.data.assistant_data as Json;
    expect(done).toMatchObject({ role: 'assistant', content: 'Hello', session_id: id });

    const messages = await json(await fetch(`${base}/sessions/${id}/messages?order=asc`));
    expect((messages.messages as Json[]).map((m) => [m.role, m.content])).toEqual([
      ['user', 'hi'],
      ['assistant', 'Hello'],
    ]);
    expect((messages.messages as Json[])[0]?.id).toBe(res.headers.get('x-cognition-message-id'));
  });

  it('answers errors before the stream as JSON: 404, 422 naming the field, 409 in progress', async () => {
    const missing = await send('no-such-session', { content: 'x' });
    expect(missing.status).toBe(404);
    expect(await json(missing)).toMatchObject({ code: 'SESSION_NOT_FOUND' });

    const id = await newSession();
    const invalid = await send(id, { content: '', callback_url: 'ftp://x' });
    expect(invalid.status).toBe(422);
    const paths = ((await json(invalid)).errors as { path: string }[]).map((e) => e.path);
    expect(paths.sort()).toEqual(['body.callback_url', 'body.content']);

    const unknownStrategy = await send(id, { content: 'x', multitask_strategy: 'later' });
    expect(unknownStrategy.status).toBe(422);
    expect(await json(unknownStrategy)).toMatchObject({
      errors: [expect.objectContaining({ path: 'body.multitask_strategy' })],
    });

    // Fields checked past the REST schema (by the runtime) are named as the request sent them.
    const unknownParent = await send(id, { content: 'x', parent_id: 'no-such-message' });
    expect(unknownParent.status).toBe(422);
    expect(await json(unknownParent)).toMatchObject({
      errors: [
        { path: 'body.parent_id', message: expect.stringContaining('no message') as string },
      ],
    });

    // A callback into the server's own network (here: the cloud metadata address) is refused.
    const internal = await send(id, { content: 'x', callback_url: 'http://169.254.169.254/' });
    expect(internal.status).toBe(422);
    expect(await json(internal)).toMatchObject({
      code: 'VALIDATION_ERROR',
      detail: expect.stringMatching(
        /^Invalid body: body\.callback_url: 169\.254\.169\.254/,
      ) as string,
      errors: [
        {
          path: 'body.callback_url',
          message: expect.stringContaining(
            '169.254.169.254 resolves to a non-public address',
          ) as string,
        },
      ],
    });

    const badCursor = await send(id, { content: 'x' }, { 'Last-Event-ID': 'nonsense' });
    expect(badCursor.status).toBe(422);
    expect(await json(badCursor)).toMatchObject({
      errors: [{ path: 'headers.last-event-id', message: expect.any(String) as string }],
    });

    t.model.push({ text: ['slow'], hang: true });
    const callsBefore = t.model.calls.length;
    const first = await send(id, { content: 'one' });
    const second = await send(id, { content: 'two' });
    expect(second.status).toBe(409);
    const conflict = await json(second);
    expect(conflict.code).toBe('RUN_IN_PROGRESS');
    expect(String(conflict.detail)).toMatch(/run is in progress/i);

    // Aborted inside the model call (aborted before it, the run would leave its reply unused).
    await waitFor(() => t.model.calls.length > callsBefore);
    const aborted = await json(await fetch(`${base}/sessions/${id}/abort`, { method: 'POST' }));
    expect(aborted).toMatchObject({ aborted: true, run: { status: 'aborted' } });
    const { frames } = await readSse(first);
    const last = eventsOf(frames).at(-1);
    expect(last).toMatchObject({ event: 'error', data: { code: 'ABORTED' } });
    const runs = await json(await fetch(`${base}/sessions/${id}/runs`));
    expect((runs.runs as Json[]).length).toBe(1);
  });

  it('resumes with Last-Event-ID on the same POST: reconnected, exactly the missed events, no new run', async () => {
    const id = await newSession();
    t.model.push({ text: ['a', 'b', 'c', 'd'], delayMs: 20 });
    const first = await send(id, { content: 'go' });
    const part = await readSse(first, (frame) => frame.event === 'token');
    expect(part.dropped).toBe(true);
    const seen = eventsOf(part.frames);
    const lastSeen = seen.at(-1)?.id ?? '';
    const callsBefore = t.model.calls.length;

    const resumed = await send(id, { content: 'go' }, { 'Last-Event-ID': lastSeen });
    expect(resumed.status).toBe(200);
    const rest = eventsOf((await readSse(resumed)).frames);
    expect(rest[0]).toEqual({
      id: lastSeen,
      event: 'reconnected',
      data: { last_event_id: lastSeen, truncated: false },
    });
    const all = [...seen, ...rest.slice(1)];
    const ids = all.map((e) => e.id);
    expect(new Set(ids).size).toBe(ids.length);
    expect([...ids].sort()).toEqual(ids);
    expect(all.map((e) => e.event)).toEqual([
      'status',
      'token',
      'token',
      'token',
      'token',
      'usage',
      'status',
      'done',
    ]);
    expect(t.model.calls.length).toBe(callsBefore);
    const runs = await json(await fetch(`${base}/sessions/${id}/runs`));
    expect((runs.runs as Json[]).length).toBe(1);
  });

  it('keeps the run going when the client disconnects, and releases the subscription', async () => {
    const id = await newSession();
    t.model.push({ text: ['x', 'y', 'z'], delayMs: 60 });
    const res = await send(id, { content: 'go' });
    const part = await readSse(res, (frame) => frame.event === 'token');
    expect(part.dropped).toBe(true);
    await waitFor(() => t.eventLog.openSubscriptions === 0);
    await waitFor(async () => {
      const runs = await json(await fetch(`${base}/sessions/${id}/runs`));
      return (runs.runs as Json[])[0]?.status === 'completed';
    });
    const messages = await json(await fetch(`${base}/sessions/${id}/messages?order=asc`));
    expect((messages.messages as Json[]).at(-1)).toMatchObject({ content: 'xyz' });
  });

  it('sends heartbeat comments while the run is quiet', async () => {
    const id = await newSession();
    t.model.push({ text: ['late'], delayMs: 300 });
    const { frames } = await readSse(await send(id, { content: 'go' }));
    // Between `status` and the delayed token the stream is quiet for 300 ms (heartbeat: 40 ms).
    const token = frames.findIndex((f) => f.event === 'token');
    const status = frames.findIndex((f) => f.event === 'status');
    const pings = frames.slice(status, token).filter((f) => f.comment === 'ping');
    expect(pings.length).toBeGreaterThanOrEqual(1);
    expect(eventsOf(frames).at(-1)?.event).toBe('done');
  });

  it('replays the first run for a repeated idempotency key', async () => {
    const id = await newSession();
    t.model.push({ text: ['once'] });
    const first = await send(id, { content: 'go', idempotency_key: 'k-1' });
    const firstEvents = eventsOf((await readSse(first)).frames);
    const again = await send(id, { content: 'go', idempotency_key: 'k-1' });
    expect(again.headers.get('x-cognition-run-id')).toBe(first.headers.get('x-cognition-run-id'));
    expect(eventsOf((await readSse(again)).frames)).toEqual(firstEvents);
    const runs = await json(await fetch(`${base}/sessions/${id}/runs`));
    expect((runs.runs as Json[]).length).toBe(1);
  });
});

describe('GET /sessions/{id}/events', () => {
  it('is 204 without an active run, follows the active one, and resumes with ?last_event_id=', async () => {
    const id = await newSession();
    const idle = await fetch(`${base}/sessions/${id}/events`);
    expect(idle.status).toBe(204);

    t.model.push({ text: ['p', 'q', 'r'], delayMs: 30 });
    const original = await send(id, { content: 'go' });
    const follower = await fetch(`${base}/sessions/${id}/events`);
    expect(follower.status).toBe(200);
    const followed = eventsOf((await readSse(follower)).frames);
    const sent = eventsOf((await readSse(original)).frames);
    expect(followed).toEqual(sent);

    const cursor = sent[1]?.id ?? '';
    const resumed = await fetch(
      `${base}/sessions/${id}/events?last_event_id=${encodeURIComponent(cursor)}`,
    );
    const replay = eventsOf((await readSse(resumed)).frames);
    expect(replay[0]?.event).toBe('reconnected');
    expect(replay.slice(1)).toEqual(sent.slice(2));

    const unknownRun = await fetch(`${base}/sessions/${id}/events`, {
      headers: { 'Last-Event-ID': 'run_unknown:000000001' },
    });
    expect(unknownRun.status).toBe(404);
    expect(await json(unknownRun)).toMatchObject({ code: 'RUN_NOT_FOUND' });
  });
});

describe('runs', () => {
  it('lists runs newest first and shows one with its callback attempts', async () => {
    const id = await newSession();
    t.model.push({ text: ['one'] }, { text: ['two'] });
    await readSse(await send(id, { content: '1' }));
    await readSse(await send(id, { content: '2' }));
    const list = await json(await fetch(`${base}/sessions/${id}/runs`));
    const runs = list.runs as Json[];
    expect(runs).toHaveLength(2);
    expect(runs.every((r) => r.status === 'completed' && r.session_id === id)).toBe(true);
    expect(String(runs[0]?.id) > String(runs[1]?.id)).toBe(true);
    const detail = await json(await fetch(`${base}/sessions/${id}/runs/${String(runs[0]?.id)}`));
    expect(detail).toMatchObject({
      id: runs[0]?.id,
      status: 'completed',
      usage: { provider: 'fake', model: 'fake-model' },
      callback_attempts: [],
    });
    const other = await newSession();
    const foreign = await fetch(`${base}/sessions/${other}/runs/${String(runs[0]?.id)}`);
    expect(foreign.status).toBe(404);
  });

  it('abort without an active run reports nothing aborted', async () => {
    const id = await newSession();
    const res = await fetch(`${base}/sessions/${id}/abort`, { method: 'POST' });
    expect(res.status).toBe(200);
    expect(await json(res)).toEqual({ aborted: false, run: null });
  });

  it('refuses new messages with 503 while shutting down', async () => {
    const id = await newSession();
    t.state.shuttingDown = true;
    try {
      const res = await send(id, { content: 'late' });
      expect(res.status).toBe(503);
      expect(await json(res)).toMatchObject({ code: 'UNAVAILABLE' });
    } finally {
      t.state.shuttingDown = false;
    }
  });
});
