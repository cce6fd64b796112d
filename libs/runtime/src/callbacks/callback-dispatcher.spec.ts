import { createServer } from 'node:http';
import type { IncomingHttpHeaders } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { StorageBackend } from '@cognition/storage';
import { createMemoryStorage } from '@cognition/storage-memory';
import type { Logger } from '../logger';
import type { CompletionPayload } from './callback-dispatcher';
import { CallbackDispatcher, signPayload } from './callback-dispatcher';
import { match, waitFor } from '../testing/test-runtime';

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
  const hits: {
    signature: string | undefined;
    delivery: string | undefined;
    at: number;
    headers: IncomingHttpHeaders;
    body: string;
  }[] = [];
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      hits.push({
        signature: req.headers['x-cognition-signature'] as string | undefined,
        delivery: req.headers['x-cognition-delivery'] as string | undefined,
        at: Date.now(),
        headers: req.headers,
        body: Buffer.concat(chunks).toString('utf8'),
      });
      res.statusCode = statuses.shift() ?? 200;
      res.end();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/`;
  return { hits, url, close: () => new Promise((resolve) => server.close(resolve)) };
}

/** Memory storage holding finished runs `r1` and `r2`, the runs the payloads name. */
async function storageWithRuns(): Promise<StorageBackend> {
  const storage = createMemoryStorage();
  await storage.initialize();
  for (const id of ['r1', 'r2']) {
    const session = await storage.sessions.create({}, {});
    await storage.runs.create({ id, sessionId: session.id, status: 'running' });
    await storage.runs.update(id, { status: 'completed' });
  }
  return storage;
}

function capturingLogger(): Logger & { errors: { obj: object; msg?: string }[] } {
  const errors: { obj: object; msg?: string }[] = [];
  return {
    errors,
    debug: () => undefined,
    info: () => undefined,
    warn: () => undefined,
    error: (obj, msg) => errors.push({ obj, msg }),
  };
}

/** The receivers of these tests listen on 127.0.0.1, which the dispatcher refuses by default. */
const LOOPBACK = { allowPrivateNetwork: true };

describe('CallbackDispatcher', () => {
  let storage: StorageBackend;

  beforeEach(async () => {
    storage = await storageWithRuns();
  });

  afterEach(async () => {
    await storage.close();
  });

  it('retries 5xx with growing delays up to maxAttempts and records every attempt in storage', async () => {
    const r = await receiver([500, 502, 500, 500]);
    try {
      const dispatcher = new CallbackDispatcher(storage.runs, {
        ...LOOPBACK,
        initialDelayMs: 20,
        maxDelayMs: 40,
        maxAttempts: 3,
      });
      await dispatcher.dispatch(r.url, payload);
      const attempts = await storage.runs.listCallbackAttempts('r1');
      expect(attempts.map((a) => [a.attempt, a.status, a.ok, a.error])).toEqual([
        [1, 500, false, 'HTTP 500'],
        [2, 502, false, 'HTTP 502'],
        [3, 500, false, 'HTTP 500'],
      ]);
      const delivery = r.hits[0]?.delivery;
      expect(delivery).toEqual(match.anyString());
      for (const a of attempts) {
        expect(a).toMatchObject({ runId: 'r1', url: r.url, deliveryId: delivery });
        expect(a.durationMs).toBeGreaterThanOrEqual(0);
      }
      expect(r.hits).toHaveLength(3);
      const at = r.hits.map((h) => h.at);
      expect((at[1] ?? 0) - (at[0] ?? 0)).toBeGreaterThanOrEqual(15);
      expect((at[2] ?? 0) - (at[1] ?? 0)).toBeGreaterThanOrEqual(35);
      expect(r.hits[0]?.signature).toBeUndefined();
    } finally {
      await r.close();
    }
  });

  it('does not retry a 4xx rejection, but retries 429; one delivery id per dispatch', async () => {
    const r = await receiver([400, 429, 200]);
    try {
      const dispatcher = new CallbackDispatcher(storage.runs, {
        ...LOOPBACK,
        initialDelayMs: 1,
        secret: 'k',
      });
      await dispatcher.dispatch(r.url, payload);
      expect((await storage.runs.listCallbackAttempts('r1')).map((a) => a.status)).toEqual([400]);
      await dispatcher.dispatch(r.url, { ...payload, run_id: 'r2' });
      const second = await storage.runs.listCallbackAttempts('r2');
      expect(second.map((a) => [a.status, a.ok, a.error])).toEqual([
        [429, false, 'HTTP 429'],
        [200, true, null],
      ]);
      expect(second[0]?.deliveryId).toBe(second[1]?.deliveryId);
      expect(second[0]?.deliveryId).not.toBe(r.hits[0]?.delivery);
      expect(r.hits[0]?.signature).toBe(signPayload('k', JSON.stringify(payload)));
    } finally {
      await r.close();
    }
  });

  it('records network failures and stops retrying on close', async () => {
    const dispatcher = new CallbackDispatcher(storage.runs, {
      ...LOOPBACK,
      initialDelayMs: 60_000,
      maxAttempts: 5,
    });
    const delivery = dispatcher.dispatch('http://127.0.0.1:9/unreachable', payload);
    await new Promise((resolve) => setTimeout(resolve, 100));
    await dispatcher.close();
    await delivery;
    const attempts = await storage.runs.listCallbackAttempts('r1');
    expect(attempts).toHaveLength(1);
    expect(attempts[0]).toMatchObject({ ok: false, status: null, error: match.anyString() });
  });

  it('keeps delivering when a delivery or an attempt cannot be recorded, and logs each failure', async () => {
    const r = await receiver([503, 200]);
    try {
      const logger = capturingLogger();
      const dispatcher = new CallbackDispatcher(storage.runs, {
        ...LOOPBACK,
        initialDelayMs: 1,
        logger,
      });
      // No run of this id exists: storage refuses every record with RUN_NOT_FOUND.
      await dispatcher.dispatch(r.url, { ...payload, run_id: 'gone' });
      expect(r.hits).toHaveLength(2);
      // The delivery cannot be stored either: it goes on from memory.
      expect(logger.errors).toHaveLength(3);
      expect(logger.errors[0]).toMatchObject({
        msg: 'could not store a pending completion callback; delivering without surviving a restart',
        obj: { runId: 'gone', err: match.objectContaining({ code: 'RUN_NOT_FOUND' }) },
      });
      expect(logger.errors[1]).toMatchObject({
        msg: 'could not record a completion callback attempt',
        obj: { runId: 'gone', attempt: 1, err: match.objectContaining({ code: 'RUN_NOT_FOUND' }) },
      });
      expect(logger.errors[2]).toMatchObject({ obj: { attempt: 2 } });
      expect(await storage.runs.listCallbackAttempts('gone')).toEqual([]);
    } finally {
      await r.close();
    }
  });

  it('leaves a retry pending at close, and the next process makes each later attempt once', async () => {
    const r = await receiver([503]);
    try {
      // A retry not due for a minute when this process stops.
      const first = new CallbackDispatcher(storage.runs, { ...LOOPBACK, initialDelayMs: 60_000 });
      void first.dispatch(r.url, payload);
      await waitFor(async () => (await storage.runs.listCallbackAttempts('r1')).length === 1);
      await first.close();
      const [left] = await storage.runs.listPendingCallbacks();
      expect(left).toMatchObject({ runId: 'r1', url: r.url, attempts: 1 });
      expect(JSON.parse(left?.body ?? '')).toEqual(payload);
      // Time passes: the retry is due. Two processes start; only one makes attempt 2.
      await storage.runs.settlePendingCallback(left?.deliveryId ?? '', new Date());
      const next = [1, 2].map(() => new CallbackDispatcher(storage.runs, LOOPBACK));
      expect(await Promise.all(next.map((d) => d.resumePending()))).toEqual([1, 1]);
      await waitFor(async () => (await storage.runs.listPendingCallbacks()).length === 0);
      await Promise.all(next.map((d) => d.close()));
      const attempts = await storage.runs.listCallbackAttempts('r1');
      expect(attempts.map((a) => [a.deliveryId, a.attempt, a.status])).toEqual([
        [left?.deliveryId, 1, 503],
        [left?.deliveryId, 2, 200],
      ]);
      expect(r.hits.map((h) => h.delivery)).toEqual([left?.deliveryId, left?.deliveryId]);
    } finally {
      await r.close();
    }
  });

  it('sends a callback with a config as its formatter shapes it, the same after a restart', async () => {
    const r = await receiver([503, 200]);
    const config = { a2aVersion: '1.0' as const, token: 'tok', authentication: null };
    const shaped = {
      body: '{"task":{"id":"r1"}}',
      headers: { 'Content-Type': 'application/a2a+json', 'X-A2A-Notification-Token': 'tok' },
    };
    try {
      const first = new CallbackDispatcher(storage.runs, {
        ...LOOPBACK,
        secret: 'k',
        initialDelayMs: 60_000,
        format: (p, c) => (p.run_id === 'r1' && c === config ? shaped : { body: '', headers: {} }),
      });
      void first.dispatch(r.url, payload, config);
      await waitFor(async () => (await storage.runs.listCallbackAttempts('r1')).length === 1);
      await first.close();
      // The next process has no formatter: the stored delivery holds the body and headers.
      const [left] = await storage.runs.listPendingCallbacks();
      await storage.runs.settlePendingCallback(left?.deliveryId ?? '', new Date());
      const next = new CallbackDispatcher(storage.runs, { ...LOOPBACK, secret: 'k' });
      await next.resumePending();
      await waitFor(async () => (await storage.runs.listPendingCallbacks()).length === 0);
      await next.close();
      expect(r.hits).toHaveLength(2);
      for (const hit of r.hits) {
        expect(hit.body).toBe(shaped.body);
        expect(hit.signature).toBe(signPayload('k', shaped.body));
        expect(hit.headers).toMatchObject({
          'content-type': 'application/a2a+json',
          'x-a2a-notification-token': 'tok',
        });
      }
    } finally {
      await r.close();
    }
  });

  it('takes over only deliveries overdue past the grace (their node died), each attempt once', async () => {
    const r = await receiver([200, 200]);
    try {
      const base = { url: r.url, body: JSON.stringify(payload), headers: {}, attempts: 1 };
      await storage.runs.savePendingCallback({
        ...base,
        deliveryId: 'dead-node',
        runId: 'r1',
        nextAttemptAt: new Date(Date.now() - 60_000),
      });
      await storage.runs.savePendingCallback({
        ...base,
        deliveryId: 'live-node',
        runId: 'r2',
        nextAttemptAt: new Date(Date.now() - 1_000),
      });
      const nodes = [1, 2].map(() => new CallbackDispatcher(storage.runs, LOOPBACK));
      const taken = await Promise.all(nodes.map((d) => d.resumeOverdue(15_000)));
      expect(taken).toEqual([1, 1]); // both saw it; the claim lets one make the attempt
      await waitFor(async () =>
        (await storage.runs.listPendingCallbacks()).every((d) => d.deliveryId !== 'dead-node'),
      );
      await Promise.all(nodes.map((d) => d.close()));
      expect(r.hits.map((h) => h.delivery)).toEqual(['dead-node']);
      expect((await storage.runs.listPendingCallbacks()).map((d) => d.deliveryId)).toEqual([
        'live-node',
      ]);
    } finally {
      await r.close();
    }
  });

  it('refuses loopback, private and link-local URLs by default, once, without sending', async () => {
    const r = await receiver([200, 200, 200]);
    try {
      const dispatcher = new CallbackDispatcher(storage.runs, { initialDelayMs: 1 });
      await dispatcher.dispatch(r.url, payload);
      await dispatcher.dispatch('http://169.254.169.254/latest/meta-data', {
        ...payload,
        run_id: 'r2',
      });
      expect(r.hits).toHaveLength(0);
      const [loopback] = await storage.runs.listCallbackAttempts('r1');
      expect(await storage.runs.listCallbackAttempts('r1')).toHaveLength(1);
      expect(loopback).toMatchObject({
        ok: false,
        status: null,
        error: 'refused: 127.0.0.1 resolves to a non-public address (127.0.0.1)',
      });
      expect(await storage.runs.listCallbackAttempts('r2')).toMatchObject([
        { error: 'refused: 169.254.169.254 resolves to a non-public address (169.254.169.254)' },
      ]);
    } finally {
      await r.close();
    }
  });
});
