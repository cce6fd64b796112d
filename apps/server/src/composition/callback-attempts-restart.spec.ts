import path from 'node:path';
import { eventsOf, readSse } from '@cognition/runtime/testing/http';
import superjson from 'superjson';
import type { RunningServer } from './server';
import { callbackReceiver, restartableCallbackServer } from '../testing/callback-restart';

type Json = Record<string, unknown>;

async function getJson(url: string): Promise<Json> {
  const res = await fetch(url);
  expect(res.status).toBe(200);
  return (await res.json()) as Json;
}

describe('completion-callback attempts across a restart', () => {
  const server = restartableCallbackServer('0.01');
  const { workspace, config } = server;
  const start = () => server.start();
  let running: RunningServer | undefined;

  afterAll(() => server.cleanup());

  it('a new server on the same SQLite file returns the attempts through REST and runs.get', async () => {
    expect(config.persistence).toEqual({
      backend: 'sqlite',
      path: path.join(workspace, '.cognition', 'state.db'),
    });
    const hook = await callbackReceiver([503]);
    try {
      running = await start();
      const created = await fetch(`${running.url}/sessions`, { method: 'POST', body: '{}' });
      const sessionId = String(((await created.json()) as Json).id);
      const sent = await fetch(`${running.url}/sessions/${sessionId}/messages`, {
        method: 'POST',
        headers: { 'Content-Type': 'application/json' },
        body: JSON.stringify({ content: 'hi', callback_url: hook.url }),
      });
      const runId = sent.headers.get('x-cognition-run-id') ?? '';
      expect(eventsOf((await readSse(sent)).frames).at(-1)).toMatchObject({
        event: 'error',
        data: { code: 'PROVIDER_CONFIG_ERROR' },
      });
      const runPath = `/sessions/${sessionId}/runs/${runId}`;
      let before: Json[] = [];
      const until = Date.now() + 10_000;
      while (before.length < 2 && Date.now() < until) {
        await new Promise((resolve) => setTimeout(resolve, 20));
        before = (await getJson(`${running.url}${runPath}`)).callback_attempts as Json[];
      }
      expect(before.map((a) => [a.attempt, a.status, a.ok, a.error])).toEqual([
        [1, 503, false, 'HTTP 503'],
        [2, 200, true, null],
      ]);
      expect(hook.deliveries).toHaveLength(2);

      await running.shutdown();
      running = await start();

      const after = await getJson(`${running.url}${runPath}`);
      expect(after).toMatchObject({ id: runId, status: 'failed' });
      expect(after.callback_attempts).toEqual(before);

      const input = JSON.stringify(superjson.serialize({ sessionId, runId }));
      const res = await fetch(`${running.url}/trpc/runs.get?input=${encodeURIComponent(input)}`);
      expect(res.status).toBe(200);
      // Parse the raw text in this realm: superjson only walks plain objects of its own realm.
      const payload = JSON.parse(await res.text()) as { result: { data: never } };
      const detail = superjson.deserialize<{ callbackAttempts: Json[] }>(payload.result.data);
      expect(detail.callbackAttempts).toEqual(
        before.map((a) => ({
          runId,
          deliveryId: a.delivery_id,
          url: hook.url,
          attempt: a.attempt,
          startedAt: new Date(String(a.started_at)),
          durationMs: a.duration_ms,
          status: a.status,
          ok: a.ok,
          error: a.error,
        })),
      );
      expect(hook.deliveries).toHaveLength(2);
    } finally {
      await hook.close();
    }
  });
});
