import { readSse } from '@cognition/runtime/testing/http';
import type { RunningServer } from './server';
import { callbackReceiver, restartableCallbackServer } from '../testing/callback-restart';

type Json = Record<string, unknown>;

describe('a completion-callback retry pending at shutdown', () => {
  // Backoff long enough that the retry is still pending when the first server stops.
  const server = restartableCallbackServer('1');
  const start = () => server.start();
  let running: RunningServer | undefined;
  let hook: Awaited<ReturnType<typeof callbackReceiver>>;
  let hits: (string | undefined)[] = [];

  beforeAll(async () => {
    hook = await callbackReceiver([503]);
    hits = hook.deliveries;
  });
  afterAll(async () => {
    await server.cleanup();
    await hook.close();
  });

  it('is delivered by the next server, each attempt once', async () => {
    const url = hook.url;
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
