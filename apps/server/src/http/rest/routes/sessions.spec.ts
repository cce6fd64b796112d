import type { TestApp } from '../../../testing/test-app';
import type { ListeningTestApp } from '../../../testing/listen';
import { listenTestApp } from '../../../testing/listen';

// Issue 14 on REST: the session actions, history, activity, rebuild, and their bad input.

type Json = Record<string, unknown>;

let served: ListeningTestApp;
let t: TestApp;
let base: string;

beforeAll(async () => {
  served = await listenTestApp();
  ({ t, base } = served);
});

afterAll(() => served.close());

async function call(
  method: string,
  path: string,
  body?: unknown,
): Promise<{ status: number; json: Json }> {
  const res = await fetch(`${base}${path}`, {
    method,
    ...(body !== undefined
      ? { headers: { 'Content-Type': 'application/json' }, body: JSON.stringify(body) }
      : {}),
  });
  const text = await res.text();
  return { status: res.status, json: text ? (JSON.parse(text) as Json) : {} };
}

async function newSession(body: Json = {}): Promise<Json> {
  const res = await call('POST', '/sessions', body);
  expect(res.status).toBe(201);
  return res.json;
}

/** One turn over SSE (the stream ends after `done`). */
async function turn(id: string, content: string, reply: string): Promise<void> {
  t.model.push({ text: reply });
  const res = await fetch(`${base}/sessions/${id}/messages`, {
    method: 'POST',
    headers: { 'Content-Type': 'application/json' },
    body: JSON.stringify({ content }),
  });
  expect(res.status).toBe(200);
  expect(await res.text()).toContain('event: done');
}

const contents = async (id: string, order = 'asc') =>
  ((await call('GET', `/sessions/${id}/messages?order=${order}`)).json['messages'] as Json[]).map(
    (m) => m['content'],
  );

describe('session actions on REST', () => {
  it('suspend, resume, complete, fail with expected_version; wrong state and stale version 409', async () => {
    const s = await newSession({ title: 'x', system_prompt: 'Be brief.', task: 'Triage' });
    expect(s).toMatchObject({ system_prompt: 'Be brief.', task: 'Triage', status: 'active' });
    const id = String(s['id']);
    const suspended = await call('POST', `/sessions/${id}/suspend`, { expected_version: 1 });
    expect(suspended).toMatchObject({ status: 200, json: { status: 'suspended', version: 2 } });
    expect((await call('POST', `/sessions/${id}/messages`, { content: 'hi' })).status).toBe(409);
    const stale = await call('POST', `/sessions/${id}/resume`, { expected_version: 1 });
    expect(stale).toMatchObject({ status: 409, json: { code: 'VERSION_CONFLICT' } });
    // curl -X POST $URL/sessions/$ID/resume (no body)
    expect((await call('POST', `/sessions/${id}/resume`)).json['status']).toBe('active');
    const completed = await call('POST', `/sessions/${id}/complete`);
    expect(completed.json['status']).toBe('completed');
    expect(completed.json['ended_at']).toEqual(expect.stringMatching(/^\d{4}-/));
    const wrong = await call('POST', `/sessions/${id}/resume`);
    expect(wrong).toMatchObject({ status: 409, json: { code: 'CONFLICT' } });
    expect(String(wrong.json['detail'])).toContain('completed');
    const other = String((await newSession())['id']);
    const failed = await call('POST', `/sessions/${other}/fail`, { reason: 'out of budget' });
    expect(failed.json['status']).toBe('failed');
  });

  it('PATCHes system_prompt, task and expires_at; PUT/DELETE one metadata key', async () => {
    const id = String((await newSession({ metadata: { a: '1' } }))['id']);
    const expires = new Date(Date.now() + 3_600_000).toISOString();
    const patched = await call('PATCH', `/sessions/${id}`, {
      system_prompt: 'Pirate.',
      task: 'Find gold',
      expires_at: expires,
    });
    expect(patched.json).toMatchObject({
      system_prompt: 'Pirate.',
      task: 'Find gold',
      expires_at: expires,
    });
    const put = await call('PUT', `/sessions/${id}/metadata/b`, { value: '2' });
    expect(put.json['metadata']).toEqual({ a: '1', b: '2' });
    const del = await call('DELETE', `/sessions/${id}/metadata/a`);
    expect(del.json['metadata']).toEqual({ b: '2' });
    expect((await call('DELETE', `/sessions/${id}/metadata/a`)).status).toBe(404);
    const badDate = await call('PATCH', `/sessions/${id}`, { expires_at: 'tomorrow' });
    expect(badDate.status).toBe(422);
    expect((badDate.json['errors'] as Json[]).map((e) => e['path'])).toContain('body.expires_at');
  });

  it('an expired session is never readable (404), and lists skip it', async () => {
    const id = String(
      (await newSession({ expires_at: new Date(Date.now() - 1000).toISOString() }))['id'],
    );
    expect((await call('GET', `/sessions/${id}`)).status).toBe(404);
    const listed = (await call('GET', '/sessions?limit=500')).json['sessions'] as Json[];
    expect(listed.map((s) => s['id'])).not.toContain(id);
  });

  it('history, rewind, a different second turn, fork from the original second turn, activity', async () => {
    const id = String((await newSession({ title: 'travel' }))['id']);
    await turn(id, 'first question', 'first answer');
    await turn(id, 'second question', 'second answer');
    // REST lists newest first by default.
    expect(await contents(id, 'desc')).toEqual([
      'second answer',
      'second question',
      'first answer',
      'first question',
    ]);
    const history = await call('GET', `/sessions/${id}/history?limit=50`);
    const checkpoints = history.json['checkpoints'] as Json[];
    expect(checkpoints[0]).toMatchObject({
      message_count: 4,
      last_message_preview: 'second answer',
    });
    const originalSecond = String(checkpoints[0]?.['checkpoint_id']);
    const afterFirst = checkpoints.find(
      (c) => c['message_count'] === 2 && c['last_message_preview'] === 'first answer',
    );
    const rewound = await call('POST', `/sessions/${id}/rewind`, {
      checkpoint_id: afterFirst?.['checkpoint_id'],
    });
    expect(rewound).toMatchObject({ status: 200, json: { message_count: 2 } });
    await turn(id, 'a different second question', 'a different second answer');
    const fork = await call('POST', `/sessions/${id}/fork`, {
      checkpoint_id: originalSecond,
      title: 'original branch',
    });
    expect(fork).toMatchObject({ status: 201, json: { parent_id: id, title: 'original branch' } });
    expect(await contents(id)).toEqual([
      'first question',
      'first answer',
      'a different second question',
      'a different second answer',
    ]);
    expect(await contents(String(fork.json['id']))).toEqual([
      'first question',
      'first answer',
      'second question',
      'second answer',
    ]);
    const activity = await call('GET', `/sessions/${id}/activity?limit=3`);
    expect(activity.json).toMatchObject({ has_more: true });
    const entries = activity.json['entries'] as Json[];
    expect(entries[0]).toMatchObject({
      session_id: id,
      type: expect.stringMatching(/^session\./) as string,
    });
    const rebuilt = await call('POST', `/sessions/${id}/messages/rebuild`);
    expect(rebuilt).toEqual({ status: 200, json: { messages: 4 } });
  });

  it('clear: the history stays, the message count with it', async () => {
    const id = String((await newSession())['id']);
    await turn(id, 'remember 7', 'ok');
    const cleared = await call('POST', `/sessions/${id}/clear`);
    expect(cleared).toMatchObject({ status: 200, json: { message_count: 2, version: 2 } });
    await turn(id, 'which number?', 'none');
    const call0 = t.model.calls[t.model.calls.length - 1];
    expect(call0?.messages.slice(1).map((m) => m.content)).toEqual(['which number?']);
  });

  it('bad input on every new route is a 4xx naming the problem, never 500', async () => {
    const id = String((await newSession())['id']);
    await turn(id, 'q', 'a');
    const cases: [string, string, unknown, number, string?][] = [
      ['POST', `/sessions/${id}/suspend`, { expected_version: 0 }, 422, 'body.expected_version'],
      [
        'POST',
        `/sessions/${id}/suspend`,
        { expected_version: 'one' },
        422,
        'body.expected_version',
      ],
      ['POST', `/sessions/${id}/suspend`, { surprise: true }, 422],
      ['POST', `/sessions/${id}/fail`, { reason: '' }, 422, 'body.reason'],
      ['POST', `/sessions/${id}/rewind`, {}, 422],
      ['POST', `/sessions/${id}/rewind`, { checkpoint_id: 'x', message_id: 'y' }, 422],
      ['POST', `/sessions/${id}/rewind`, { checkpoint_id: 'no-such' }, 404],
      ['POST', `/sessions/${id}/fork`, { message_id: 'no-such' }, 404],
      ['POST', `/sessions/${id}/fork`, { checkpoint_id: 'no-such' }, 404],
      ['PUT', `/sessions/${id}/metadata/k`, {}, 422, 'body.value'],
      ['PUT', `/sessions/${id}/metadata/k`, { value: 7 }, 422, 'body.value'],
      ['GET', `/sessions/${id}/history?limit=0`, undefined, 422],
      ['GET', `/sessions/${id}/activity?offset=-1`, undefined, 422],
      ['GET', '/sessions?status=gone', undefined, 422],
      ['POST', '/sessions/missing/suspend', {}, 404],
      ['POST', '/sessions/missing/fork', {}, 404],
      ['GET', '/sessions/missing/history', undefined, 404],
      ['GET', '/sessions/missing/activity', undefined, 404],
      ['POST', '/sessions/missing/messages/rebuild', undefined, 404],
      [
        'POST',
        '/sessions',
        { checkpoint_retention: 'keep_last:0' },
        422,
        'body.checkpoint_retention',
      ],
    ];
    for (const [method, path, body, status, field] of cases) {
      const res = await call(method, path, body);
      expect({ method, path, status: res.status }).toEqual({ method, path, status });
      expect(typeof res.json['detail']).toBe('string');
      if (field) {
        expect((res.json['errors'] as Json[]).map((e) => e['path'])).toContain(field);
      }
    }
  });

  it('filters abandoned sessions on GET /sessions?status=abandoned', async () => {
    const id = String((await newSession({ title: 'idle' }))['id']);
    t.storage.setSessionPolicy({ now: () => new Date(Date.now() + 3_600_000) });
    try {
      const abandoned = (await call('GET', '/sessions?status=abandoned&limit=500')).json;
      expect((abandoned['sessions'] as Json[]).map((s) => s['id'])).toContain(id);
      expect((await call('GET', `/sessions/${id}`)).json['status']).toBe('abandoned');
    } finally {
      t.storage.setSessionPolicy({ now: () => new Date() });
    }
  });
});
