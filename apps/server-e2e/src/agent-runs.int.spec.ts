import { createCognitionClient, streamMessage } from '@cognition/client';
import type { AgentEventEnvelope } from '@cognition/client';
import { createHmac } from 'node:crypto';
import { createServer } from 'node:http';
import type { IncomingHttpHeaders, Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import {
  FAKE_MODEL,
  FakeOpenAIServer,
  createSession,
  eventually,
  postMessage,
  startAgentServer,
} from './testing/agent-server';
import { http } from './testing/http';
import type { ServerProcess } from './testing/server-process';
import { tempWorkspace } from './testing/server-process';
import { eventsOf, readSse } from '@cognition/runtime/testing/http';

/**
 * Agent runs against the BUILT server (SQLite) whose `openai_compatible` provider is a fake
 * OpenAI server in this process: multi-turn conversations with tool calls (typed client and raw
 * SSE), reconnection, abort, conflicts, idempotency, per-agent tools, completion callbacks.
 * One server for the whole file; each test scripts the fake model's replies it needs.
 */

const CALLBACK_SECRET = 'e2e-callback-secret-0123';

type Json = Record<string, unknown>;

let fake: FakeOpenAIServer;
let server: ServerProcess;
const workspace = tempWorkspace();

beforeAll(async () => {
  fake = await FakeOpenAIServer.start();
  server = await startAgentServer(fake, workspace.dir, {
    COGNITION_CALLBACK_SECRET: CALLBACK_SECRET,
    COGNITION_CALLBACK_MAX_ATTEMPTS: '4',
    COGNITION_CALLBACK_BACKOFF_SECONDS: '0.05',
    COGNITION_CALLBACK_MAX_BACKOFF_SECONDS: '0.2',
    // The callback receiver listens on loopback, refused unless allowed.
    COGNITION_CALLBACK_ALLOW_PRIVATE_NETWORK: 'true',
  });
});

afterAll(async () => {
  if (server) expect(await server.stop()).toBe(0);
  await fake.close();
  workspace.remove();
});

async function listMessages(sessionId: string): Promise<Json[]> {
  const res = await http(server.url, 'GET', `/sessions/${sessionId}/messages?limit=500&order=asc`);
  return res.json?.['messages'] as Json[];
}

async function listRuns(sessionId: string): Promise<Json[]> {
  return (await http(server.url, 'GET', `/sessions/${sessionId}/runs`)).json?.['runs'] as Json[];
}

/** The roles (and tool-call names / tool ids) of a Chat Completions request's messages. */
function shapeOf(request: FakeOpenAIServer['requests'][number] | undefined): string[] {
  return (request?.body.messages ?? []).map((m) => {
    if (m.role === 'assistant' && m.tool_calls?.length) {
      const names = (m.tool_calls as { function: { name: string } }[]).map((c) => c.function.name);
      return `assistant:${names.join(',')}`;
    }
    if (m.role === 'tool') return `tool:${m.tool_call_id ?? ''}`;
    return `${m.role}:${typeof m.content === 'string' ? m.content : JSON.stringify(m.content)}`;
  });
}

describe('a multi-turn conversation with tool calls', () => {
  it('streams through the typed client and raw SSE; the model sees the whole history', async () => {
    const client = createCognitionClient({ url: `${server.url}/trpc` });
    const session = await client.sessions.create.mutate({ title: 'notes' });
    const start = fake.requests.length;

    // Turn 1 through the typed client: a tool call, then an answer.
    fake.enqueue(
      { toolCalls: [{ id: 'call_w', name: 'write_file', args: { path: 'a.txt', content: 'A1' } }] },
      { text: 'Wrote a.txt.' },
    );
    const turn1: AgentEventEnvelope[] = [];
    for await (const envelope of streamMessage(client, {
      sessionId: session.id,
      content: 'Write A1 to a.txt',
    })) {
      turn1.push(envelope);
    }
    expect(turn1.map((e) => e.event.type)).toEqual([
      'status',
      'tool_call',
      'tool_result',
      'token',
      'token',
      'usage',
      'status',
      'done',
    ]);
    expect(turn1[1]?.event).toEqual({
      type: 'tool_call',
      id: 'call_w',
      name: 'write_file',
      args: { path: 'a.txt', content: 'A1' },
    });
    expect(turn1[2]?.event).toMatchObject({ type: 'tool_result', tool_call_id: 'call_w' });
    expect(turn1[2]?.event).toMatchObject({ exit_code: 0 });
    const done1 = turn1.at(-1)?.event;
    expect(done1).toMatchObject({ type: 'done', assistant_data: { content: 'Wrote a.txt.' } });

    const first = fake.requests[start];
    expect(first?.body.model).toBe(FAKE_MODEL);
    expect(first?.body.stream).toBe(true);
    expect(shapeOf(first).slice(1)).toEqual(['user:Write A1 to a.txt']);
    expect(first?.body.messages?.[0]?.role).toBe('system');
    // The default agent is offered every tool, write and execute included.
    expect(fake.toolNames(start)).toEqual(
      expect.arrayContaining(['write_file', 'edit_file', 'delete', 'execute', 'read_file', 'ls']),
    );

    // Turn 2 over raw HTTP, as curl would send it: read the file back.
    fake.enqueue(
      { toolCalls: [{ id: 'call_r', name: 'read_file', args: { path: 'a.txt' } }] },
      { text: 'It says A1.' },
    );
    const res = await postMessage(server.url, session.id, { content: 'What does a.txt say?' });
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toBe('text/event-stream');
    const { frames } = await readSse(res);
    expect(frames[0]?.retry).toBe(3000);
    const turn2 = eventsOf(frames);
    expect(turn2.map((e) => e.event)).toEqual([
      'status',
      'tool_call',
      'tool_result',
      'token',
      'token',
      'token',
      'usage',
      'status',
      'done',
    ]);
    expect(turn2[2]?.data).toEqual({ tool_call_id: 'call_r', output: 'A1', exit_code: 0 });
    const usage = turn2[6]?.data;
    expect(usage).toMatchObject({
      provider: 'openai_compatible',
      model: FAKE_MODEL,
      estimated: false,
      estimated_cost: null,
    });
    expect(Number(usage?.['input_tokens'])).toBeGreaterThan(0);

    // Every model call of turn 2 received the whole conversation so far.
    expect(shapeOf(fake.requests[start + 2]).slice(1)).toEqual([
      'user:Write A1 to a.txt',
      'assistant:write_file',
      'tool:call_w',
      'assistant:Wrote a.txt.',
      'user:What does a.txt say?',
    ]);
    expect(shapeOf(fake.requests[start + 3]).slice(-2)).toEqual([
      'assistant:read_file',
      'tool:call_r',
    ]);
    expect(fake.requests.length).toBe(start + 4);

    // The stored projection is the same conversation, readable by both surfaces.
    const messages = await listMessages(session.id);
    expect(messages.map((m) => [m['role'], m['content']])).toEqual([
      ['user', 'Write A1 to a.txt'],
      ['assistant', ''],
      ['tool', expect.stringContaining('a.txt') as string],
      ['assistant', 'Wrote a.txt.'],
      ['user', 'What does a.txt say?'],
      ['assistant', ''],
      ['tool', 'A1'],
      ['assistant', 'It says A1.'],
    ]);
    expect(messages[1]?.['tool_calls']).toEqual([
      { id: 'call_w', name: 'write_file', args: { path: 'a.txt', content: 'A1' } },
    ]);
    const page = await client.messages.list.query({ sessionId: session.id, limit: 500 });
    expect(page.messages.map((m) => m.id)).toEqual(messages.map((m) => m['id']));
  });
});

describe('reconnecting', () => {
  it('resumes a dropped stream on the same POST and on GET /events: no gap, no duplicate, one run', async () => {
    const sessionId = await createSession(server.url);
    const words = Array.from({ length: 12 }, (_, i) => `w${i + 1} `);
    fake.enqueue({ text: words, chunkDelayMs: 40 });
    const requestsBefore = fake.requests.length;
    const body = { content: 'Count' };

    const tokens = <E extends { event: string }>(events: E[]) =>
      events.filter((e) => e.event === 'token');
    const first = await readSse(
      await postMessage(server.url, sessionId, body),
      (_f, all) => tokens(eventsOf(all)).length === 3,
    );
    expect(first.dropped).toBe(true);
    const part1 = eventsOf(first.frames);

    // Reconnect 1: the same POST (body and all), carrying Last-Event-ID.
    const lastId1 = part1.at(-1)?.id ?? '';
    const second = await readSse(
      await postMessage(server.url, sessionId, body, { 'Last-Event-ID': lastId1 }),
      (_f, all) => tokens(eventsOf(all)).length === 3,
    );
    expect(second.dropped).toBe(true);
    const part2 = eventsOf(second.frames);
    expect(part2[0]).toEqual({
      id: lastId1,
      event: 'reconnected',
      data: { last_event_id: lastId1, truncated: false },
    });

    // Reconnect 2: GET /events with the header, to the end of the run.
    const lastId2 = part2.at(-1)?.id ?? '';
    const res = await fetch(`${server.url}/sessions/${sessionId}/events`, {
      headers: { 'Last-Event-ID': lastId2 },
    });
    expect(res.status).toBe(200);
    const part3 = eventsOf((await readSse(res)).frames);
    expect(part3[0]?.event).toBe('reconnected');

    const all = [...part1, ...part2.slice(1), ...part3.slice(1)];
    const ids = all.map((e) => e.id);
    expect(new Set(ids).size).toBe(ids.length);
    expect([...ids].sort()).toEqual(ids);
    const seqs = ids.map((id) => Number(id.slice(id.lastIndexOf(':') + 1)));
    expect(seqs).toEqual(seqs.map((_, i) => i + 1));
    expect(tokens(all).map((e) => e.data['content'])).toEqual(words);
    expect(all.at(-1)?.event).toBe('done');

    // A reconnect never re-sends: one run, one model call, one user message.
    expect(await listRuns(sessionId)).toHaveLength(1);
    expect(fake.requests.length).toBe(requestsBefore + 1);
    const users = (await listMessages(sessionId)).filter((m) => m['role'] === 'user');
    expect(users).toHaveLength(1);

    // After the run ended, ?last_event_id= still replays exactly the rest.
    const late = await fetch(
      `${server.url}/sessions/${sessionId}/events?last_event_id=${encodeURIComponent(ids[5] ?? '')}`,
    );
    const replay = eventsOf((await readSse(late)).frames);
    expect(replay.slice(1).map((e) => e.id)).toEqual(ids.slice(6));
  });
});

describe('abort, conflicts and idempotency', () => {
  it('follows one run from many streams without a listener-leak warning', async () => {
    const sessionId = await createSession(server.url);
    fake.enqueue({ text: ['never'], hangAfterChunks: 0 });
    const sent = await postMessage(server.url, sessionId, { content: 'Wait' });
    const streams = [sent];
    for (let i = 0; i < 15; i += 1) {
      streams.push(await fetch(`${server.url}/sessions/${sessionId}/events`));
    }
    const reading = streams.map((res) => readSse(res));
    await http(server.url, 'POST', `/sessions/${sessionId}/abort`);
    for (const read of reading) {
      expect(eventsOf((await read).frames).at(-1)).toMatchObject({ event: 'error' });
    }
    // Found by reading the server's output: every stream listens to the shutdown signal.
    expect(server.stderr.join('')).not.toContain('MaxListenersExceededWarning');
  });

  it('aborts within a second, keeps the partial answer, then accepts the next message', async () => {
    const sessionId = await createSession(server.url);
    fake.enqueue({ text: ['Partial ', 'answer ', 'that ', 'never ', 'ends'], hangAfterChunks: 2 });
    const res = await postMessage(server.url, sessionId, { content: 'Think hard' });
    const reading = readSse(res);
    await eventually(async () => {
      const runs = await listRuns(sessionId);
      return runs[0]?.['status'] === 'running' && fake.requests.at(-1)?.body.messages;
    });
    // Wait until both chunks went out, so the partial text is known.
    await new Promise((resolve) => setTimeout(resolve, 200));

    const busy = await http(server.url, 'POST', `/sessions/${sessionId}/messages`, {
      body: { content: 'Are you there?' },
    });
    expect(busy.status).toBe(409);
    expect(busy.json).toMatchObject({ code: 'RUN_IN_PROGRESS' });
    expect(String(busy.json?.['detail'])).toMatch(/run is in progress/i);

    const started = Date.now();
    const aborted = await http(server.url, 'POST', `/sessions/${sessionId}/abort`);
    const elapsed = Date.now() - started;
    expect(aborted.status).toBe(200);
    expect(aborted.json).toMatchObject({ aborted: true, run: { status: 'aborted' } });
    expect(elapsed).toBeLessThan(1500);

    const events = eventsOf((await reading).frames);
    expect(events.at(-1)).toMatchObject({ event: 'error', data: { code: 'ABORTED' } });
    // Tokens delivered together may arrive merged: the text is what counts.
    const tokens = events.filter((e) => e.event === 'token').map((e) => String(e.data['content']));
    expect(tokens.join('')).toBe('Partial answer ');
    expect(fake.requests.at(-1)?.clientClosedAt).not.toBeNull();

    const messages = await listMessages(sessionId);
    expect(messages.at(-1)).toMatchObject({
      role: 'assistant',
      content: 'Partial answer ',
      metadata: { aborted: 'true' },
    });

    fake.enqueue({ text: 'Back again.' });
    const next = eventsOf(
      (await readSse(await postMessage(server.url, sessionId, { content: 'Go on' }))).frames,
    );
    expect(next.at(-1)).toMatchObject({
      event: 'done',
      data: { assistant_data: { content: 'Back again.' } },
    });
    const statuses = (await listRuns(sessionId)).map((r) => r['status']);
    expect(statuses).toEqual(['completed', 'aborted']);
  });

  it('returns the first run for a repeated idempotency key', async () => {
    const sessionId = await createSession(server.url);
    fake.enqueue({ text: 'Only once.' });
    const before = fake.requests.length;
    const body = { content: 'Do it once', idempotency_key: 'job-42' };
    const first = await postMessage(server.url, sessionId, body);
    const firstEvents = eventsOf((await readSse(first)).frames);
    const again = await postMessage(server.url, sessionId, body);
    expect(again.status).toBe(200);
    expect(again.headers.get('x-cognition-run-id')).toBe(first.headers.get('x-cognition-run-id'));
    expect(again.headers.get('x-cognition-message-id')).toBe(
      first.headers.get('x-cognition-message-id'),
    );
    expect(eventsOf((await readSse(again)).frames)).toEqual(firstEvents);
    expect(fake.requests.length).toBe(before + 1);
    expect(await listRuns(sessionId)).toHaveLength(1);
  });

  it('offers the readonly agent no write, edit, delete or execute tool', async () => {
    const sessionId = await createSession(server.url, { agent_name: 'readonly' });
    fake.enqueue({ text: 'Looked only.' });
    const index = fake.requests.length;
    const events = eventsOf(
      (await readSse(await postMessage(server.url, sessionId, { content: 'Look' }))).frames,
    );
    expect(events.at(-1)?.event).toBe('done');
    expect([...fake.toolNames(index)].sort()).toEqual(
      // Artifacts are readable (issue 16), never writable, by the readonly agent.
      ['artifact_list', 'artifact_read', 'glob', 'grep', 'ls', 'read_file', 'write_todos'].sort(),
    );
  });
});

describe('completion callbacks', () => {
  let receiver: Server;
  const received: { headers: IncomingHttpHeaders; body: string; status: number }[] = [];

  beforeAll(async () => {
    receiver = createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (chunk: Buffer) => chunks.push(chunk));
      req.on('end', () => {
        // The first two deliveries fail; the receiver recovers on the third.
        const status = received.length < 2 ? 503 : 200;
        received.push({
          headers: req.headers,
          body: Buffer.concat(chunks).toString('utf8'),
          status,
        });
        res.writeHead(status).end();
      });
    });
    await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', resolve));
  });

  afterAll(async () => {
    receiver.closeAllConnections();
    await new Promise<void>((resolve) => receiver.close(() => resolve()));
  });

  it('retries a failing receiver, signs every attempt, and records the attempts', async () => {
    const sessionId = await createSession(server.url);
    const { port } = receiver.address() as AddressInfo;
    const callbackUrl = `http://127.0.0.1:${port}/hooks/cognition`;
    fake.enqueue({ text: 'Summary ready.' });
    const res = await postMessage(server.url, sessionId, {
      content: 'Summarize',
      callback_url: callbackUrl,
    });
    const runId = res.headers.get('x-cognition-run-id') ?? '';
    const events = eventsOf((await readSse(res)).frames);
    expect(events.at(-1)?.event).toBe('done');

    await eventually(() => Promise.resolve(received.length >= 3));
    expect(received.map((r) => r.status)).toEqual([503, 503, 200]);
    for (const attempt of received) {
      const expected = `sha256=${createHmac('sha256', CALLBACK_SECRET).update(attempt.body).digest('hex')}`;
      expect(attempt.headers['x-cognition-signature']).toBe(expected);
      expect(attempt.headers['content-type']).toMatch(/application\/json/);
    }
    const deliveries = new Set(received.map((r) => r.headers['x-cognition-delivery']));
    expect(deliveries.size).toBe(1);
    expect(JSON.parse(received[2]?.body ?? '{}')).toMatchObject({
      session_id: sessionId,
      run_id: runId,
      status: 'completed',
      output: 'Summary ready.',
      model_used: FAKE_MODEL,
      error: null,
    });

    const detail = await eventually(async () => {
      const run = await http(server.url, 'GET', `/sessions/${sessionId}/runs/${runId}`);
      const attempts = run.json?.['callback_attempts'] as Json[] | undefined;
      return attempts?.length === 3 ? run.json : undefined;
    });
    expect(detail?.['status']).toBe('completed');
    expect(
      (detail?.['callback_attempts'] as Json[]).map((a) => [a['attempt'], a['status'], a['ok']]),
    ).toEqual([
      [1, 503, false],
      [2, 503, false],
      [3, 200, true],
    ]);
    expect((detail?.['callback_attempts'] as Json[])[0]).toMatchObject({ url: callbackUrl });
  });
});
