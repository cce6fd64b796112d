import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { CompletionPayload } from './callback-dispatcher';
import { CallbackDispatcher, signPayload } from './callback-dispatcher';
import { match } from '../test-support';

const payload: CompletionPayload = {
  session_id: 's',
  message_id: 'm',
  run_id: 'r1',
  status: 'completed',
  output: 'hi',
  token_usage: { input: 1, output: 2 },
  model_used: 'x',
  completed_at: '2025-01-01T00:00:00.000Z',
  error: null,
};

async function receiver(statuses: number[]) {
  const hits: { signature: string | undefined; at: number }[] = [];
  const server = createServer((req, res) => {
    req.resume();
    req.on('end', () => {
      hits.push({
        signature: req.headers['x-cognition-signature'] as string | undefined,
        at: Date.now(),
      });
      res.statusCode = statuses.shift() ?? 200;
      res.end();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/`;
  return { hits, url, close: () => new Promise((resolve) => server.close(resolve)) };
}

describe('CallbackDispatcher', () => {
  it('retries 5xx with growing delays up to maxAttempts and records every attempt', async () => {
    const r = await receiver([500, 502, 500, 500]);
    try {
      const dispatcher = new CallbackDispatcher({
        initialDelayMs: 20,
        maxDelayMs: 40,
        maxAttempts: 3,
      });
      await dispatcher.dispatch(r.url, payload);
      const attempts = dispatcher.attempts('r1');
      expect(attempts.map((a) => [a.attempt, a.status, a.ok])).toEqual([
        [1, 500, false],
        [2, 502, false],
        [3, 500, false],
      ]);
      expect(r.hits).toHaveLength(3);
      const at = r.hits.map((h) => h.at);
      expect((at[1] ?? 0) - (at[0] ?? 0)).toBeGreaterThanOrEqual(15);
      expect((at[2] ?? 0) - (at[1] ?? 0)).toBeGreaterThanOrEqual(35);
      expect(r.hits[0]?.signature).toBeUndefined();
    } finally {
      await r.close();
    }
  });

  it('does not retry a 4xx rejection, but retries 429', async () => {
    const r = await receiver([400, 429, 200]);
    try {
      const dispatcher = new CallbackDispatcher({ initialDelayMs: 1, secret: 'k' });
      await dispatcher.dispatch(r.url, payload);
      expect(dispatcher.attempts('r1').map((a) => a.status)).toEqual([400]);
      await dispatcher.dispatch(r.url, { ...payload, run_id: 'r2' });
      expect(dispatcher.attempts('r2').map((a) => a.status)).toEqual([429, 200]);
      expect(r.hits[0]?.signature).toBe(signPayload('k', JSON.stringify(payload)));
    } finally {
      await r.close();
    }
  });

  it('records network failures and stops retrying on close', async () => {
    const dispatcher = new CallbackDispatcher({ initialDelayMs: 60_000, maxAttempts: 5 });
    const delivery = dispatcher.dispatch('http://127.0.0.1:9/unreachable', payload);
    await new Promise((resolve) => setTimeout(resolve, 100));
    await dispatcher.close();
    await delivery;
    const attempts = dispatcher.attempts('r1');
    expect(attempts).toHaveLength(1);
    expect(attempts[0]).toMatchObject({ ok: false, status: null, error: match.anyString() });
  });
});
