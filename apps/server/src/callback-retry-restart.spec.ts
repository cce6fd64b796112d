import { mkdtempSync, rmSync } from 'node:fs';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { FakeExecutionBackendFactory, readSse } from '@cognition/runtime/testing';
import pino from 'pino';
import { loadConfig } from './env';
import type { RunningServer } from './server';
import { startServer } from './server';

type Json = Record<string, unknown>;

describe('a completion-callback retry pending at shutdown', () => {
  const workspace = mkdtempSync(path.join(os.tmpdir(), 'cognition-callback-retry-'));
  // No LLM provider: the run fails at once, and its callback is due like any other run's.
  const config = loadConfig(
    {
      COGNITION_PORT: '0',
      COGNITION_CALLBACK_MAX_ATTEMPTS: '3',
      COGNITION_CALLBACK_ALLOW_PRIVATE_NETWORK: 'true',
      // Long enough that the retry is still pending when the first server stops.
      COGNITION_CALLBACK_BACKOFF_SECONDS: '1',
    },
    workspace,
  );
  const start = () =>
    startServer(config, {
      logger: pino({ level: 'silent' }),
      sandbox: new FakeExecutionBackendFactory(),
    });
  let running: RunningServer | undefined;
  const hits: (string | undefined)[] = [];
  const statuses = [503];
  const hook = createServer((req, res) => {
    req.resume();
    req.on('end', () => {
      hits.push(req.headers['x-cognition-delivery'] as string | undefined);
      res.statusCode = statuses.shift() ?? 200;
      res.end();
    });
  });

  beforeAll(() => new Promise<void>((resolve) => hook.listen(0, '127.0.0.1', resolve)));
  afterAll(async () => {
    await running?.shutdown();
    await new Promise((resolve) => hook.close(resolve));
    rmSync(workspace, { recursive: true, force: true });
  });

  it('is delivered by the next server, each attempt once', async () => {
    const url = `http://127.0.0.1:${(hook.address() as AddressInfo).port}/hook`;
    running = await start();
    const created = await fetch(`${running.url}/sessions`, { method: 'POST', body: '{}' });
    const sessionId = String(((await created.json()) as Json).id);
    const sent = await fetch(`${running.url}/sessions/${sessionId}/messages`, {
      method: 'POST',
      headers: { 'Content-Type': 'application/json' },
      body: JSON.stringify({ content: 'hi', callback_url: url }),
    });
    const runId = sent.headers.get('x-cognition-run-id') ?? '';
    await readSse(sent);
    const runPath = `/sessions/${sessionId}/runs/${runId}`;
    const attempts = async () =>
      (((await (await fetch(`${running?.url ?? ''}${runPath}`)).json()) as Json)
        .callback_attempts ?? []) as Json[];
    while ((await attempts()).length === 0) await new Promise((r) => setTimeout(r, 20));
    await running.shutdown();
    expect(hits).toHaveLength(1);

    running = await start();
    while ((await attempts()).length < 2) await new Promise((r) => setTimeout(r, 50));
    const recorded = await attempts();
    expect(recorded.map((a) => [a.attempt, a.status, a.ok])).toEqual([
      [1, 503, false],
      [2, 200, true],
    ]);
    expect(new Set(recorded.map((a) => a.delivery_id)).size).toBe(1);
    expect(hits).toEqual([recorded[0]?.delivery_id, recorded[0]?.delivery_id]);
  });
});
