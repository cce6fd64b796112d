import { createServer } from 'node:net';
import type { AddressInfo } from 'node:net';
import type { PrivateRedis } from '@cognition/cluster-redis/testing';
import { startPrivateRedis } from '@cognition/cluster-redis/testing';
import { eventsOf, readSse } from '@cognition/runtime/testing/http';
import type { RecordedRequest } from '@cognition/runtime/testing/http';
import { FakeOpenAIServer, createSession, eventually, postMessage } from './testing/agent-server';
import type { TestCluster } from './testing/cluster';
import { startCluster } from './testing/cluster';
import { http } from './testing/http';
import { trackOutput } from './testing/process-logs';
import type { PrivatePostgres } from './testing/private-postgres';
import { startPrivatePostgres } from './testing/private-postgres';

/**
 * Redis, then PostgreSQL, stopped in the middle of a run and started again: the run goes on (its state is in
 * PostgreSQL), what needs Redis answers clear 503s meanwhile, a stream followed on another node
 * still gets every event, and the nodes recover by themselves once Redis is back.
 */

type Json = Record<string, unknown>;
const ANSWER = Array.from({ length: 80 }, (_, i) => `r${i + 1}`).join(' ');

function reply(request: RecordedRequest) {
  const users = (request.body.messages ?? []).filter((m) => m.role === 'user');
  const content = users.at(-1)?.content;
  const last = typeof content === 'string' ? content : '';
  if (last.startsWith('hang')) return { text: 'partial', hangAfterChunks: 1 };
  return { text: ANSWER, chunkDelayMs: 50 };
}

async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  await new Promise((resolve) => server.close(resolve));
  return port;
}

describe('Redis outage in the middle of a run (two nodes)', () => {
  let fake: FakeOpenAIServer;
  let cluster: TestCluster;
  let redis: PrivateRedis;
  let port: number;

  beforeAll(async () => {
    port = await freePort();
    redis = await startPrivateRedis(port, (child, output) =>
      trackOutput(`redis :${port}`, output, child),
    );
    fake = await FakeOpenAIServer.start({ fallback: reply });
    cluster = await startCluster({
      size: 2,
      fake,
      leaseSeconds: 2,
      env: { COGNITION_REDIS_URL: `redis://127.0.0.1:${port}` },
    });
  }, 90_000);
  afterAll(async () => {
    await cluster?.close();
    await fake?.close();
    await redis?.stop();
  });

  const redisOk = async (node: number) =>
    ((await http(cluster.nodeUrl(node), 'GET', '/health')).json?.['node'] as Json)?.['redis'] as
      Json | undefined;

  it('keeps the run and its streams whole, answers 503 for what needs Redis, recovers', async () => {
    const sessionId = await createSession(cluster.nodeUrl(0));
    const origin = await postMessage(cluster.nodeUrl(0), sessionId, { content: 'tell me' });
    const originEvents = readSse(origin);
    // A client follows the run from the other node (live through the Redis fan-out).
    await eventually(async () => {
      const run = await http(cluster.nodeUrl(0), 'GET', `/sessions/${sessionId}/runs`);
      return ((run.json?.['runs'] as Json[]) ?? []).length > 0;
    });
    const follower = readSse(await fetch(`${cluster.nodeUrl(1)}/sessions/${sessionId}/events`));
    await new Promise((resolve) => setTimeout(resolve, 500));

    await redis.stop();
    await eventually(async () => (await redisOk(0))?.['ok'] === false);
    const health = await http(cluster.nodeUrl(0), 'GET', '/health');
    expect(health.json?.['status']).toBe('degraded');

    // Aborting a run of another node needs Redis: a clear 503 meanwhile.
    const other = await createSession(cluster.nodeUrl(0));
    const hanging = await postMessage(cluster.nodeUrl(0), other, { content: 'hang on' });
    const abort = await http(cluster.nodeUrl(1), 'POST', `/sessions/${other}/abort`);
    expect(abort.status).toBe(503);
    expect(abort.json?.['code']).toBe('UNAVAILABLE');
    expect(String(abort.json?.['detail'])).toMatch(/Redis is unavailable/);

    await redis.start();
    await eventually(async () => (await redisOk(0))?.['ok'] === true, 15_000);
    await eventually(async () => (await redisOk(1))?.['ok'] === true, 15_000);

    for (const events of [
      eventsOf((await originEvents).frames),
      eventsOf((await follower).frames),
    ]) {
      const ids = events.map((e) => e.id);
      expect(ids).toEqual([...new Set(ids)].sort());
      const text = events
        .filter((e) => e.event === 'token')
        .map((e) => String(e.data['content']))
        .join('');
      expect(text).toBe(ANSWER);
      expect(events.at(-1)?.event).toBe('done');
    }
    // Abort across nodes works again.
    const again = await http(cluster.nodeUrl(1), 'POST', `/sessions/${other}/abort`);
    expect(again.status).toBe(200);
    const hangingEvents = eventsOf((await readSse(hanging)).frames);
    expect(hangingEvents.at(-1)).toMatchObject({ event: 'error', data: { code: 'ABORTED' } });
  }, 120_000);
});

describe('PostgreSQL outage in the middle of a run (two nodes)', () => {
  let fake: FakeOpenAIServer;
  let cluster: TestCluster;
  let database: PrivatePostgres;

  beforeAll(async () => {
    database = startPrivatePostgres(await freePort());
    fake = await FakeOpenAIServer.start({ fallback: reply });
    cluster = await startCluster({ size: 2, fake, leaseSeconds: 2, databaseUrl: database.url });
  }, 90_000);
  afterAll(async () => {
    await cluster?.close();
    await fake?.close();
    database?.remove();
  });

  it('answers 503 (never 500) while it is down, loses no acknowledged message, recovers by itself', async () => {
    const [a, b] = [cluster.nodeUrl(0), cluster.nodeUrl(1)];
    const sessionId = await createSession(a);
    const origin = await postMessage(a, sessionId, { content: 'tell me' });
    const messageId = String(origin.headers.get('x-cognition-message-id'));
    const streaming = readSse(origin);
    await new Promise((resolve) => setTimeout(resolve, 600));

    await database.stop();
    for (const [url, method, path] of [
      [a, 'GET', '/sessions'],
      [b, 'GET', `/sessions/${sessionId}`],
      [b, 'POST', '/sessions'],
      [a, 'GET', '/ready'],
    ] as const) {
      const answer = await http(url, method, path, method === 'POST' ? { body: {} } : {});
      expect({ path, status: answer.status }).toEqual({ path, status: 503 });
    }

    await database.start();
    for (const url of [a, b]) {
      await eventually(async () => (await http(url, 'GET', '/sessions')).status === 200, 30_000);
    }
    // The acknowledged message is there; the run it started ended (finished, or failed when
    // its writes met the outage) instead of staying active.
    const stored = await http(b, 'GET', `/sessions/${sessionId}/messages/${messageId}`);
    expect(stored.json).toMatchObject({ role: 'user', content: 'tell me' });
    // Its stream ended with a terminal event (`done`, or `error` when its writes met the
    // outage), not with a cut connection: the node running it died of the outage (issue 31).
    const last = eventsOf((await streaming).frames).at(-1);
    expect(['done', 'error']).toContain(last?.event);
    await eventually(async () => {
      const runs = (await http(a, 'GET', `/sessions/${sessionId}/runs`)).json?.['runs'] as Json[];
      return runs.length === 1 && ['completed', 'failed'].includes(String(runs[0]?.['status']));
    }, 30_000);
    // And the session takes the next message, on either node.
    const next = eventsOf(
      (await readSse(await postMessage(b, sessionId, { content: 'again' }))).frames,
    );
    expect(next.at(-1)?.event).toBe('done');
  }, 120_000);
});
