import { createHmac } from 'node:crypto';
import type { IncomingMessage } from 'node:http';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { AgentEventEnvelope } from '@cognition/contracts';
import type { LlmConfigInput } from '../providers/config';
import type { TestRuntime, TestRuntimeOptions } from '../testing/test-runtime';
import {
  collect,
  createTestRuntime,
  match,
  sendAndCollect,
  waitFor,
} from '../testing/test-runtime';
import { FakeOpenAIServer } from '../testing/fake-openai-server';

// These tests drive the real openai_compatible provider (LangChain's OpenAI client) over loopback.

function providers(
  baseUrl: string,
  extra: Partial<LlmConfigInput['providers'] extends (infer P)[] | undefined ? P : never> = {},
  prices?: LlmConfigInput['prices'],
): LlmConfigInput {
  return {
    providers: [
      {
        id: 'local',
        kind: 'openai_compatible',
        model: 'fake-model',
        models: ['gpt-4o-mini'],
        baseUrl,
        maxRetries: 0,
        ...extra,
      },
    ],
    prices,
  };
}

const lastEvent = (events: AgentEventEnvelope[]) => events[events.length - 1]?.event;

describe('openai_compatible provider against the fake server', () => {
  let server: FakeOpenAIServer;
  let rt: TestRuntime;

  async function start(
    options: Partial<TestRuntimeOptions> = {},
    prices?: LlmConfigInput['prices'],
  ) {
    rt = await createTestRuntime({ providers: providers(server.baseUrl, {}, prices), ...options });
    return rt;
  }

  beforeEach(async () => {
    server = await FakeOpenAIServer.start();
  });
  afterEach(async () => {
    await rt.cleanup();
    await server.close();
  });

  it('sends the whole history, tool call and result included, on the next turn', async () => {
    await start();
    server.enqueue(
      { text: 'Listing.', toolCalls: [{ id: 'call_ls', name: 'ls', args: { path: '.' } }] },
      { text: 'There is one file.' },
      { text: 'You asked about files.' },
    );
    const session = await rt.createSession();
    await (await rt.sandbox.forSession(session.id, rt.workspace)).write('notes.md', 'x');
    const first = await sendAndCollect(rt, session, 'What files are there?');
    expect(lastEvent(first.events)?.type).toBe('done');
    expect(first.events.filter((e) => e.event.type === 'tool_result').map((e) => e.event)).toEqual([
      { type: 'tool_result', tool_call_id: 'call_ls', output: 'notes.md (1 bytes)', exit_code: 0 },
    ]);
    const second = await sendAndCollect(rt, session, 'What did I ask?');
    expect(lastEvent(second.events)).toMatchObject({
      type: 'done',
      assistant_data: { content: 'You asked about files.' },
    });

    expect(server.requests).toHaveLength(3);
    const history = server.requests[2]?.body.messages ?? [];
    expect(history.map((m) => m.role)).toEqual([
      'system',
      'user',
      'assistant',
      'tool',
      'assistant',
      'user',
    ]);
    expect(history[1]?.content).toBe('What files are there?');
    expect(history[2]?.tool_calls).toEqual([
      { id: 'call_ls', type: 'function', function: { name: 'ls', arguments: '{"path":"."}' } },
    ]);
    expect(history[3]).toMatchObject({ tool_call_id: 'call_ls', content: 'notes.md (1 bytes)' });
    expect(history[4]?.content).toBe('There is one file.');
    expect(history[5]?.content).toBe('What did I ask?');
    expect(server.requests[0]?.body).toMatchObject({ model: 'fake-model', stream: true });
    // No subagents exist, so `task` is not offered.
    expect(server.toolNames(0).sort()).toEqual(
      [
        'artifact_list',
        'artifact_read',
        'artifact_write',
        'delete',
        'edit_file',
        'execute',
        'glob',
        'grep',
        'inspect_package',
        'ls',
        'read_file',
        'web_fetch',
        'write_file',
        'write_todos',
      ].sort(),
    );
    const rows = await rt.storage.messages.listAll(session.id, {});
    expect(rows.map((r) => [r.role, r.content])).toEqual([
      ['user', 'What files are there?'],
      ['assistant', 'Listing.'],
      ['tool', 'notes.md (1 bytes)'],
      ['assistant', 'There is one file.'],
      ['user', 'What did I ask?'],
      ['assistant', 'You asked about files.'],
    ]);
  });

  it('offers the readonly agent no write, edit, delete or execute tool', async () => {
    await start();
    server.enqueue({ text: 'I can only read.' });
    const session = await rt.createSession('readonly');
    await sendAndCollect(rt, session, 'Delete everything');
    expect(server.toolNames(0)).toEqual([
      'ls',
      'read_file',
      'glob',
      'grep',
      'write_todos',
      'artifact_list',
      'artifact_read',
    ]);
    expect(server.requests[0]?.body.messages?.[0]?.content).toContain('read-only');
  });

  it('aborts a streaming model call within a second and keeps the partial answer', async () => {
    await start();
    server.enqueue({ text: ['Hello ', 'wor'], hangAfterChunks: 2 });
    const session = await rt.createSession();
    const { run } = await rt.runs.scheduler.send({
      sessionId: session.id,
      scope: {},
      content: 'Say hello',
    });
    const seen: AgentEventEnvelope[] = [];
    const stream = await rt.runs.events(session.id, {}, { runId: run.id });
    const consumed = (async () => {
      for await (const e of stream) seen.push(e);
    })();
    await waitFor(() => seen.filter((e) => e.event.type === 'token').length === 2);
    const t0 = Date.now();
    const result = await rt.runs.abort(session.id, {});
    const elapsed = Date.now() - t0;
    await consumed;
    expect(elapsed).toBeLessThan(1000);
    expect(result.run?.status).toBe('aborted');
    expect(lastEvent(seen)).toMatchObject({ type: 'error', code: 'ABORTED' });
    await waitFor(() => server.requests[0]?.clientClosedAt !== null);
    const rows = await rt.storage.messages.listAll(session.id, {});
    expect(rows.map((r) => [r.role, r.content, r.metadata.aborted])).toEqual([
      ['user', 'Say hello', undefined],
      ['assistant', 'Hello wor', 'true'],
    ]);
    // The partial answer is part of the next turn's history.
    server.enqueue({ text: 'Hello world.' });
    await sendAndCollect(rt, session, 'Finish');
    expect(server.requests[1]?.body.messages?.map((m) => m.content)).toEqual([
      match.anyString(),
      'Say hello',
      'Hello wor',
      'Finish',
    ]);
  });

  it('reports provider usage with its cost, and a null cost for a model without a price', async () => {
    await start();
    server.enqueue(
      { text: 'priced', usage: { prompt_tokens: 1000, completion_tokens: 500 } },
      { text: 'unpriced', usage: { prompt_tokens: 10, completion_tokens: 5 } },
    );
    const priced = await rt.createSession('default', { model: 'gpt-4o-mini' });
    const a = await sendAndCollect(rt, priced, 'hi');
    expect(a.events.find((e) => e.event.type === 'usage')?.event).toEqual({
      type: 'usage',
      input_tokens: 1000,
      output_tokens: 500,
      estimated_cost: 0.00045,
      provider: 'local',
      model: 'gpt-4o-mini',
      estimated: false,
    });
    expect((await rt.storage.runs.get(a.run.id))?.usage).toEqual({
      inputTokens: 1000,
      outputTokens: 500,
      costUsd: 0.00045,
      model: 'gpt-4o-mini',
      provider: 'local',
      estimated: false,
      models: [
        {
          provider: 'local',
          model: 'gpt-4o-mini',
          calls: 1,
          inputTokens: 1000,
          outputTokens: 500,
          cachedInputTokens: 0,
          costUsd: 0.00045,
          estimated: false,
        },
      ],
    });
    const sessionUsage = await rt.storage.usage.get(priced.id, {});
    expect(sessionUsage?.usage).toMatchObject({
      tokensIn: 1000,
      tokensOut: 500,
      costUsd: 0.00045,
      costComplete: true,
      runs: 1,
      lastModel: 'gpt-4o-mini',
    });
    expect(server.requests[0]?.body.model).toBe('gpt-4o-mini');
    const unknown = await rt.createSession();
    const b = await sendAndCollect(rt, unknown, 'hi');
    expect(b.events.find((e) => e.event.type === 'usage')?.event).toMatchObject({
      input_tokens: 10,
      output_tokens: 5,
      estimated_cost: null,
      model: 'fake-model',
    });
    const row = (await rt.storage.messages.listAll(unknown.id, {}))[1];
    expect(row).toMatchObject({ tokenCount: 5, modelUsed: 'fake-model' });
    // An unknown price is never counted as zero.
    expect((await rt.storage.usage.get(unknown.id, {}))?.usage).toMatchObject({
      tokensIn: 10,
      costUsd: 0,
      costComplete: false,
    });
  });

  it('prices a model from the configured table and estimates usage the provider did not report', async () => {
    await start({}, { 'fake-model': { inputPerMillion: 1_000_000, outputPerMillion: 0 } });
    server.enqueue({ text: 'no usage here', usage: null });
    const session = await rt.createSession();
    const { events } = await sendAndCollect(rt, session, 'hi');
    const usage = events.find((e) => e.event.type === 'usage')?.event;
    expect(usage).toMatchObject({ estimated: true, provider: 'local' });
    if (usage?.type !== 'usage') throw new Error('no usage event');
    expect(usage.input_tokens).toBeGreaterThan(0);
    expect(usage.estimated_cost).toBe(usage.input_tokens);
  });

  it('fails a run on HTTP 500 and opens the breaker; a 429 does not count against the provider', async () => {
    await start({ extra: { breakerOptions: { failureThreshold: 2, timeoutSeconds: 60 } } });
    const session = await rt.createSession();
    server.enqueue({ status: 429, errorMessage: 'slow down' });
    const limited = await sendAndCollect(rt, session, 'one');
    expect(lastEvent(limited.events)).toMatchObject({ type: 'error', code: 'PROVIDER_ERROR' });
    expect(rt.runs.breakerSnapshots()[0]).toMatchObject({
      name: 'llm:local',
      state: 'CLOSED',
      consecutiveFailures: 0,
    });

    server.enqueue({ status: 500 }, { status: 500 });
    const down1 = await sendAndCollect(rt, session, 'two');
    expect(lastEvent(down1.events)).toMatchObject({ type: 'error', code: 'PROVIDER_ERROR' });
    expect(lastEvent(down1.events)?.type === 'error' && lastEvent(down1.events)).toMatchObject({
      message: match.containing('HTTP 500'),
    });
    await sendAndCollect(rt, session, 'three');
    expect(rt.runs.breakerSnapshots()[0]?.state).toBe('OPEN');
    const requestsBefore = server.requests.length;
    const rejected = await sendAndCollect(rt, session, 'four');
    expect(lastEvent(rejected.events)).toMatchObject({ type: 'error', code: 'CIRCUIT_OPEN' });
    expect(server.requests.length).toBe(requestsBefore);
    expect((await rt.storage.runs.get(rejected.run.id))?.error?.code).toBe('CIRCUIT_OPEN');
  });

  it('answers a tool call with malformed JSON arguments with an error the model sees', async () => {
    await start();
    server.enqueue(
      { toolCalls: [{ id: 'bad', name: 'read_file', args: '{"path": ' }] },
      { text: 'sorry' },
    );
    const session = await rt.createSession();
    const { events } = await sendAndCollect(rt, session, 'read');
    const result = events.find((e) => e.event.type === 'tool_result')?.event;
    expect(result).toMatchObject({ tool_call_id: 'bad', exit_code: 2 });
    expect(lastEvent(events)?.type).toBe('done');
    expect(server.requests[1]?.body.messages?.map((m) => m.role)).toEqual([
      'system',
      'user',
      'assistant',
      'tool',
    ]);
  });

  it('delivers the completion callback, signed, retrying after a failure', async () => {
    const received: {
      body: string;
      signature: string | undefined;
      delivery: string | undefined;
    }[] = [];
    const statuses = [503, 200];
    const receiver = createServer((req: IncomingMessage, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => {
        received.push({
          body: Buffer.concat(chunks).toString('utf8'),
          signature: req.headers['x-cognition-signature'] as string | undefined,
          delivery: req.headers['x-cognition-delivery'] as string | undefined,
        });
        res.statusCode = statuses.shift() ?? 200;
        res.end();
      });
    });
    await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', resolve));
    try {
      await start({
        // The receiver listens on loopback, which callbacks may reach only when allowed.
        callbacks: {
          secret: 's3cret',
          initialDelayMs: 10,
          maxAttempts: 3,
          allowPrivateNetwork: true,
        },
      });
      server.enqueue({ text: 'All done.', usage: { prompt_tokens: 7, completion_tokens: 3 } });
      const session = await rt.createSession();
      const url = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/hook`;
      const { run, events } = await sendAndCollect(rt, session, 'work', { callbackUrl: url });
      await waitFor(async () => (await rt.runs.callbackAttempts(run.id)).length === 2);
      const attempts = await rt.runs.callbackAttempts(run.id);
      expect(attempts.map((a) => [a.attempt, a.status, a.ok])).toEqual([
        [1, 503, false],
        [2, 200, true],
      ]);
      expect(received).toHaveLength(2);
      for (const r of received) {
        const expected = `sha256=${createHmac('sha256', 's3cret').update(r.body).digest('hex')}`;
        expect(r.signature).toBe(expected);
      }
      expect(received[0]?.delivery).toBe(received[1]?.delivery);
      const done = lastEvent(events);
      expect(JSON.parse(received[1]?.body ?? '{}')).toEqual({
        session_id: session.id,
        message_id: done?.type === 'done' ? done.assistant_data?.id : 'missing',
        run_id: run.id,
        status: 'completed',
        output: 'All done.',
        token_usage: { input: 7, output: 3 },
        model_used: 'fake-model',
        completed_at: match.matching(/^\d{4}-\d\d-\d\dT/),
        error: null,
      });
    } finally {
      await new Promise((resolve) => receiver.close(resolve));
    }
  });

  it('streams a whole run to a subscriber that attached before the first token', async () => {
    await start();
    server.enqueue({ text: 'one two three four', chunkDelayMs: 5 });
    const session = await rt.createSession();
    const { run } = await rt.runs.scheduler.send({
      sessionId: session.id,
      scope: {},
      content: 'count',
    });
    const events = await collect(await rt.runs.events(session.id, {}, { runId: run.id }));
    expect(
      events
        .filter((e) => e.event.type === 'token')
        .map((e) => (e.event.type === 'token' ? e.event.content : ''))
        .join(''),
    ).toBe('one two three four');
  });
});
