import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { FakeExecutionBackendFactory, FakeOpenAIServer, readSse } from '@cognition/runtime/testing';
import pino from 'pino';
import { loadConfig } from '../config';
import type { RunningServer } from '../composition/server';
import { startServer } from '../composition/server';
import type { ReceivedSpan } from '../testing/otlp-receiver';
import { startOtlpReceiver } from '../testing/otlp-receiver';

const INCOMING_TRACES = {
  'http/json': '4bf92f3577b34da6a3ce929d0e0e4736',
  'http/protobuf': '5bf92f3577b34da6a3ce929d0e0e4737',
} as const;
const CONTENT_TYPES = {
  'http/json': 'application/json',
  'http/protobuf': 'application/x-protobuf',
} as const;
const INCOMING_SPAN = '00f067aa0ba902b7';
const REQUEST_ID = 'req-trace-1';

async function waitFor(check: () => boolean, ms = 10_000): Promise<void> {
  const until = Date.now() + ms;
  while (!check()) {
    if (Date.now() > until) throw new Error('condition not met in time');
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

describe('OpenTelemetry traces (OTEL_EXPORTER_OTLP_ENDPOINT)', () => {
  let receiver: Awaited<ReturnType<typeof startOtlpReceiver>>;
  let model: FakeOpenAIServer;
  let server: RunningServer | undefined;
  let workspace: string;

  beforeAll(async () => {
    receiver = await startOtlpReceiver();
    model = await FakeOpenAIServer.start();
    workspace = mkdtempSync(path.join(os.tmpdir(), 'cognition-traces-'));
  });
  afterAll(async () => {
    await server?.shutdown();
    await model.close();
    await receiver.close();
    rmSync(workspace, { recursive: true, force: true });
  });

  it.each(['http/json', 'http/protobuf'] as const)(
    "exports one turn's span tree over %s: request, run, model calls with tokens, tool call, sandbox, storage",
    async (protocol) => {
      const INCOMING_TRACE = INCOMING_TRACES[protocol];
      await server?.shutdown();
      const config = loadConfig(
        {
          COGNITION_PORT: '0',
          COGNITION_LLM_PROVIDER: 'openai_compatible',
          COGNITION_LLM_MODEL: 'fake-model',
          COGNITION_OPENAI_COMPATIBLE_BASE_URL: model.baseUrl,
          OTEL_EXPORTER_OTLP_ENDPOINT: receiver.endpoint,
          OTEL_EXPORTER_OTLP_PROTOCOL: protocol,
          OTEL_SERVICE_NAME: 'cognition-under-test',
          OTEL_BSP_SCHEDULE_DELAY: '50',
        },
        workspace,
      );
      server = await startServer(config, {
        logger: pino({ level: 'silent' }),
        sandbox: new FakeExecutionBackendFactory(),
      });
      model.enqueue(
        {
          toolCalls: [{ id: 'call_1', name: 'execute', args: { command: 'ls' } }],
          usage: { prompt_tokens: 120, completion_tokens: 12 },
        },
        { text: 'Two files.', usage: { prompt_tokens: 240, completion_tokens: 24 } },
      );
      const created = await fetch(`${server.url}/sessions`, { method: 'POST', body: '{}' });
      const sessionId = String(((await created.json()) as { id: string }).id);
      const res = await fetch(`${server.url}/sessions/${sessionId}/messages`, {
        method: 'POST',
        headers: {
          'X-Request-Id': REQUEST_ID,
          traceparent: `00-${INCOMING_TRACE}-${INCOMING_SPAN}-01`,
        },
        body: JSON.stringify({ content: 'list the files' }),
      });
      expect(res.status).toBe(200);
      const runId = res.headers.get('x-cognition-run-id');
      const { frames } = await readSse(res);
      expect(JSON.stringify(frames)).toContain('"event":"done"');

      const inTurn = () => receiver.spans.filter((s) => s.traceId === INCOMING_TRACE);
      await waitFor(() => inTurn().some((s) => s.name === 'cognition.run'));
      await waitFor(() => inTurn().some((s) => s.name === 'POST /sessions/{id}/messages'));
      const spans = inTurn();
      const named = (name: string): ReceivedSpan[] => spans.filter((s) => s.name === name);
      const one = (name: string): ReceivedSpan => {
        const found = named(name);
        expect(found.map((s) => s.name)).toEqual([name]);
        return found[0] as ReceivedSpan;
      };

      expect(receiver.contentTypes.at(-1)).toBe(CONTENT_TYPES[protocol]);
      const http = one('POST /sessions/{id}/messages');
      expect(http).toMatchObject({
        parentSpanId: INCOMING_SPAN,
        kind: 2,
        scope: '@cognition/server',
        service: 'cognition-under-test',
      });
      expect(http.attributes).toMatchObject({
        'http.request.method': 'POST',
        'http.route': '/sessions/{id}/messages',
        'http.response.status_code': 200,
        'cognition.request_id': REQUEST_ID,
        'cognition.session.id': sessionId,
      });

      const run = one('cognition.run');
      expect(run.parentSpanId).toBe(http.spanId);
      expect(run.attributes).toMatchObject({
        'cognition.run.id': runId,
        'cognition.session.id': sessionId,
        'cognition.run.outcome': 'completed',
        'gen_ai.agent.name': 'default',
        // Baggage from the request and the run, copied onto the span.
        'cognition.request_id': REQUEST_ID,
        'cognition.session_id': sessionId,
        'cognition.run_id': runId,
      });

      const chats = named('chat fake-model');
      expect(chats.map((s) => s.parentSpanId)).toEqual([run.spanId, run.spanId]);
      expect(
        chats.map((s) => [
          s.attributes['gen_ai.usage.input_tokens'],
          s.attributes['gen_ai.usage.output_tokens'],
        ]),
      ).toEqual([
        [120, 12],
        [240, 24],
      ]);
      expect(chats[0]?.attributes).toMatchObject({
        'gen_ai.provider.name': 'openai_compatible',
        'gen_ai.request.model': 'fake-model',
        'cognition.session_id': sessionId,
        'cognition.request_id': REQUEST_ID,
      });

      const tool = one('execute_tool execute');
      expect(tool.parentSpanId).toBe(run.spanId);
      expect(tool.attributes).toMatchObject({
        'gen_ai.tool.call.id': 'call_1',
        'cognition.tool.exit_code': 0,
      });
      const exec = one('sandbox.exec');
      expect(exec.parentSpanId).toBe(tool.spanId);
      expect(exec.attributes).toMatchObject({
        'cognition.sandbox.backend': 'local',
        'process.exit.code': 0,
        'cognition.session_id': sessionId,
        'cognition.run_id': runId,
      });

      // Storage: the run's own writes under the run span, the message's under the request span.
      const storage = spans.filter((s) => s.name.startsWith('storage '));
      expect(storage.every((s) => s.attributes['db.system.name'] === 'sqlite')).toBe(true);
      expect(storage.every((s) => s.attributes['cognition.request_id'] === REQUEST_ID)).toBe(true);
      const update = storage.find((s) => s.name === 'storage runs.update');
      expect(update?.parentSpanId).toBe(run.spanId);
      expect(update?.attributes['cognition.session_id']).toBe(sessionId);
      expect(storage.some((s) => s.name === 'storage checkpointer.put')).toBe(true);
      expect(storage.find((s) => s.name === 'storage runs.create')?.parentSpanId).toBe(http.spanId);

      // Every span of the turn hangs off the tree rooted at the caller's span.
      const ids = new Set(spans.map((s) => s.spanId));
      for (const span of spans) {
        expect(span.parentSpanId === INCOMING_SPAN || ids.has(span.parentSpanId ?? '')).toBe(true);
      }
    },
  );
});
