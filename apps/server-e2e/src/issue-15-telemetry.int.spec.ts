import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { readSse } from '@cognition/runtime/testing/http';
import {
  FAKE_MODEL,
  FakeOpenAIServer,
  createSession,
  eventually,
  postMessage,
  startAgentServer,
} from './testing/agent-server';
import type { ServerProcess } from './testing/server-process';
import { tempWorkspace } from './testing/server-process';

/**
 * Telemetry of the BUILT server (issue 15): `/metrics` behind COGNITION_METRICS_TOKEN shows a
 * turn's counters, and with OTEL_EXPORTER_OTLP_ENDPOINT the turn's spans reach an OTLP/HTTP
 * receiver in this process (the bundle loads the exporter as Node does, not as jest does).
 */

const TOKEN = 'e2e-metrics-token-0123456789';

interface Span {
  traceId: string;
  spanId: string;
  parentSpanId?: string;
  name: string;
}

let fake: FakeOpenAIServer;
let server: ServerProcess;
const workspace = tempWorkspace();
const spans: Span[] = [];
const receiver = createServer((req, res) => {
  const chunks: Buffer[] = [];
  req.on('data', (chunk: Buffer) => chunks.push(chunk));
  req.on('end', () => {
    if (req.url === '/v1/traces') {
      const body = JSON.parse(Buffer.concat(chunks).toString('utf8')) as {
        resourceSpans?: { scopeSpans?: { spans?: Span[] }[] }[];
      };
      for (const resource of body.resourceSpans ?? []) {
        for (const scope of resource.scopeSpans ?? []) spans.push(...(scope.spans ?? []));
      }
    }
    res.setHeader('Content-Type', 'application/json');
    res.end('{}');
  });
});

beforeAll(async () => {
  await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', resolve));
  fake = await FakeOpenAIServer.start();
  server = await startAgentServer(fake, workspace.dir, {
    COGNITION_METRICS_TOKEN: TOKEN,
    OTEL_EXPORTER_OTLP_ENDPOINT: `http://127.0.0.1:${(receiver.address() as AddressInfo).port}`,
    OTEL_EXPORTER_OTLP_PROTOCOL: 'http/json',
    OTEL_BSP_SCHEDULE_DELAY: '100',
  });
});

afterAll(async () => {
  if (server) expect(await server.stop()).toBe(0);
  await fake.close();
  receiver.closeAllConnections();
  await new Promise<void>((resolve) => receiver.close(() => resolve()));
  workspace.remove();
});

function sample(text: string, line: string): number | undefined {
  const found = text.split('\n').find((l) => l.startsWith(`${line} `));
  return found === undefined ? undefined : Number(found.slice(line.length + 1));
}

it("scrapes a turn's counters with the metrics token and exports the turn's span tree", async () => {
  const sessionId = await createSession(server.url);
  fake.enqueue(
    {
      toolCalls: [{ id: 'call_ls', name: 'ls', args: {} }],
      usage: { prompt_tokens: 50, completion_tokens: 5 },
    },
    { text: 'An empty workspace.', usage: { prompt_tokens: 80, completion_tokens: 8 } },
  );
  const res = await postMessage(server.url, sessionId, { content: 'what is here?' });
  expect(res.status).toBe(200);
  await readSse(res);

  expect((await fetch(`${server.url}/metrics`)).status).toBe(401);
  const scrape = await fetch(`${server.url}/metrics`, {
    headers: { Authorization: `Bearer ${TOKEN}` },
  });
  expect(scrape.status).toBe(200);
  const text = await scrape.text();
  const model = `provider="openai_compatible",model="${FAKE_MODEL}"`;
  expect(sample(text, 'cognition_runs_finished_total{outcome="completed"}')).toBe(1);
  expect(sample(text, `cognition_tokens_total{${model},type="input"}`)).toBe(130);
  expect(sample(text, `cognition_tokens_total{${model},type="output"}`)).toBe(13);
  expect(
    sample(
      text,
      'cognition_http_requests_total{method="POST",route="/sessions/{id}/messages",status="200"}',
    ),
  ).toBe(1);
  expect(
    sample(
      text,
      'cognition_storage_operation_duration_seconds_count{backend="sqlite",operation="runs.create",outcome="ok"}',
    ),
  ).toBe(1);
  expect(sample(text, 'process_resident_memory_bytes')).toBeGreaterThan(0);

  const run = await eventually(() =>
    Promise.resolve(spans.find((s) => s.name === 'cognition.run')),
  );
  const http = await eventually(() =>
    Promise.resolve(spans.find((s) => s.name === 'POST /sessions/{id}/messages')),
  );
  expect(run.parentSpanId).toBe(http.spanId);
  const inRun = spans.filter((s) => s.parentSpanId === run.spanId).map((s) => s.name);
  expect(inRun).toEqual(
    expect.arrayContaining([`chat ${FAKE_MODEL}`, 'execute_tool ls', 'storage runs.update']),
  );
  expect(inRun.filter((name) => name === `chat ${FAKE_MODEL}`)).toHaveLength(2);
});
