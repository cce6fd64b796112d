import { eventsOf, readSse } from '@cognition/runtime/testing/http';
import type { RecordedRequest } from '@cognition/runtime/testing/http';
import { FakeOpenAIServer, createSession, eventually, postMessage } from './testing/agent-server';
import type { TestCluster } from './testing/cluster';
import { startCluster } from './testing/cluster';
import { http } from './testing/http';

/**
 * Several nodes: three server processes on one PostgreSQL database and one Redis, behind a
 * real HAProxy (round robin), as docs/deployment.md describes.
 */

type Json = Record<string, unknown>;
type Ev = { id: string; event: string; data: Json };

// Sweeps every half lease: a dead node's run is taken over within 1.5 leases, leaving half a
// lease of slack under the two-lease bound on a loaded machine.
const LEASE_SECONDS = 3;
const ANSWER = Array.from({ length: 50 }, (_, i) => `w${i + 1}`).join(' ');

function reply(request: RecordedRequest) {
  const users = (request.body.messages ?? []).filter((m) => m.role === 'user');
  const content = users.at(-1)?.content;
  const last = typeof content === 'string' ? content : '';
  if (last.startsWith('slow')) return { text: ANSWER, chunkDelayMs: 40 };
  if (last.startsWith('hang')) return { text: 'partial answer', hangAfterChunks: 1 };
  return { text: 'ok' };
}

/** The answer a client rebuilds from tokens, dropping what a `resumed` event voids. */
function rebuild(events: Ev[]): string {
  let kept: Ev[] = [];
  for (const e of events) {
    if (e.event === 'resumed') {
      const voidAfter = String(e.data['void_after_event_id']);
      kept = kept.filter((k) => k.id <= voidAfter);
    }
    kept.push(e);
  }
  return kept
    .filter((e) => e.event === 'token')
    .map((e) => String(e.data['content']))
    .join('');
}

describe('three nodes behind HAProxy on one PostgreSQL and one Redis', () => {
  let fake: FakeOpenAIServer;
  let cluster: TestCluster;

  beforeAll(async () => {
    fake = await FakeOpenAIServer.start({ fallback: reply });
    cluster = await startCluster({ size: 3, fake, leaseSeconds: LEASE_SECONDS });
  }, 90_000);
  afterAll(async () => {
    await cluster?.close();
    await fake?.close();
  });

  /** The index of the node whose /health lists the run among the runs it owns. */
  async function ownerOf(runId: string): Promise<number> {
    return eventually(async () => {
      for (let i = 0; i < cluster.nodes.length; i += 1) {
        if (!cluster.nodes[i]?.process) continue;
        const health = await http(cluster.nodeUrl(i), 'GET', '/health');
        const owned = ((health.json?.['node'] as Json | null)?.['owned_runs'] ?? []) as string[];
        if (owned.includes(runId)) return i + 1;
      }
      return false;
    }).then((n) => n - 1);
  }

  it('reports each node and its Redis on /health', async () => {
    for (let i = 0; i < 3; i += 1) {
      const health = await http(cluster.nodeUrl(i), 'GET', '/health');
      expect(health.json).toMatchObject({
        status: 'healthy',
        node: { id: `node-${i + 1}`, redis: { ok: true, status: 'ready' } },
      });
    }
  });

  it('one active run per session across nodes under concurrent sends', async () => {
    const sessionId = await createSession(cluster.url);
    const sends = await Promise.all(
      [0, 1, 2, 0, 1, 2, 0, 1, 2].map((node) =>
        postMessage(cluster.nodeUrl(node), sessionId, { content: 'hang on' }),
      ),
    );
    const statuses = sends.map((r) => r.status).sort();
    expect(statuses).toEqual([200, 409, 409, 409, 409, 409, 409, 409, 409]);
    for (const r of sends) if (r.status !== 200) await r.text();
    const messages = await http(cluster.url, 'GET', `/sessions/${sessionId}/messages`);
    const rows = messages.json?.['messages'] as Json[];
    expect(rows.filter((m) => m['role'] === 'user')).toHaveLength(1);
    const winner = sends.find((r) => r.status === 200);
    await http(cluster.url, 'POST', `/sessions/${sessionId}/abort`);
    await winner?.body?.cancel();
  });

  it('aborts a run from any node within a second', async () => {
    for (const via of [1, 2]) {
      const sessionId = await createSession(cluster.url);
      const requested = fake.requests.length;
      const stream = await postMessage(cluster.nodeUrl(0), sessionId, { content: 'hang there' });
      const reading = readSse(stream);
      const runId = String(stream.headers.get('x-cognition-run-id'));
      await eventually(async () => (await ownerOf(runId)) === 0);
      await eventually(() => Promise.resolve(fake.requests.length > requested));
      const modelCall = fake.requests[fake.requests.length - 1];
      const started = Date.now();
      const abort = await http(cluster.nodeUrl(via), 'POST', `/sessions/${sessionId}/abort`);
      expect(abort.status).toBe(200);
      expect(abort.json?.['aborted']).toBe(true);
      const events = eventsOf((await reading).frames);
      expect(events.at(-1)).toMatchObject({ event: 'error', data: { code: 'ABORTED' } });
      // The cancel reached the owner: it cut its model request within a second.
      const closedAt = modelCall?.clientClosedAt?.getTime() ?? Number.POSITIVE_INFINITY;
      expect(closedAt - started).toBeLessThan(1000);
      const run = await http(cluster.url, 'GET', `/sessions/${sessionId}/runs/${runId}`);
      expect(run.json?.['status']).toBe('aborted');
    }
  });

  it('double-texting holds across nodes: an interrupt sent to another node ends the run', async () => {
    const sessionId = await createSession(cluster.url);
    const first = await postMessage(cluster.nodeUrl(0), sessionId, { content: 'hang tight' });
    const firstRun = String(first.headers.get('x-cognition-run-id'));
    const firstEvents = readSse(first);
    expect(await ownerOf(firstRun)).toBe(0);
    const second = eventsOf(
      (
        await readSse(
          await postMessage(cluster.nodeUrl(1), sessionId, {
            content: 'something else',
            multitask_strategy: 'interrupt',
          }),
        )
      ).frames,
    );
    expect(second[0]?.event).toBe('queued');
    expect(second.at(-1)?.event).toBe('done');
    expect(eventsOf((await firstEvents).frames).at(-1)).toMatchObject({
      event: 'error',
      data: { code: 'UNAVAILABLE' },
    });
    const run = await http(cluster.url, 'GET', `/sessions/${sessionId}/runs/${firstRun}`);
    expect(run.json?.['status']).toBe('interrupted');
  });

  it('a restart of one node never touches runs owned by the others', async () => {
    const sessionId = await createSession(cluster.url);
    const stream = await postMessage(cluster.nodeUrl(0), sessionId, { content: 'hang around' });
    const runId = String(stream.headers.get('x-cognition-run-id'));
    expect(await ownerOf(runId)).toBe(0);
    await cluster.stop(1, 'SIGKILL');
    await cluster.start(1);
    // Longer than two leases: node 2 swept several times meanwhile.
    await new Promise((resolve) => setTimeout(resolve, LEASE_SECONDS * 2 * 1000 + 500));
    expect(await ownerOf(runId)).toBe(0);
    const run = await http(cluster.url, 'GET', `/sessions/${sessionId}/runs/${runId}`);
    expect(run.json?.['status']).toBe('running');
    await http(cluster.url, 'POST', `/sessions/${sessionId}/abort`);
    const events = eventsOf((await readSse(stream)).frames);
    expect(events.map((e) => e.event)).not.toContain('resumed');
    expect(events.at(-1)).toMatchObject({ event: 'error', data: { code: 'ABORTED' } });
  });

  it('a stream read through the balancer survives the kill -9 of the node running its run', async () => {
    const sessionId = await createSession(cluster.url);
    const before = eventsOf(
      (
        await readSse(
          await postMessage(cluster.url, sessionId, { content: 'slow story' }),
          (_f, frames) => eventsOf(frames).filter((e) => e.event === 'token').length >= 5,
        )
      ).frames,
    );
    const runId = before[0]?.id.split(':')[0] ?? '';
    const owner = await ownerOf(runId);
    await cluster.stop(owner, 'SIGKILL');
    const killedAt = Date.now();

    const last = before.at(-1)?.id ?? '';
    const response = await fetch(`${cluster.url}/sessions/${sessionId}/events`, {
      headers: { 'Last-Event-ID': last },
    });
    let resumedAt = 0;
    const after = eventsOf(
      (
        await readSse(response, (frame) => {
          if (frame.event === 'resumed' && resumedAt === 0) resumedAt = Date.now();
          return false;
        })
      ).frames,
    );
    expect(after[0]).toMatchObject({ event: 'reconnected', data: { last_event_id: last } });
    const all = [...before, ...after.slice(1)];
    const ids = all.map((e) => e.id);
    expect(ids).toEqual([...new Set(ids)].sort());
    expect(rebuild(all)).toBe(ANSWER);
    expect(all.at(-1)?.event).toBe('done');
    // Taken over by another node within two lease periods of the kill.
    expect(resumedAt - killedAt).toBeLessThan(LEASE_SECONDS * 2 * 1000);
    const newOwner = (await http(cluster.url, 'GET', `/sessions/${sessionId}/runs/${runId}`)).json;
    expect(newOwner?.['status']).toBe('completed');
    const rows = (await http(cluster.url, 'GET', `/sessions/${sessionId}/messages?order=asc`))
      .json?.['messages'] as Json[];
    expect(rows.map((m) => [m['role'], m['content']])).toEqual([
      ['user', 'slow story'],
      ['assistant', ANSWER],
    ]);
    await cluster.start(owner);
  });
});

describe('rate limits shared by the nodes through Redis', () => {
  let fake: FakeOpenAIServer;
  let cluster: TestCluster;

  beforeAll(async () => {
    fake = await FakeOpenAIServer.start({ fallback: reply });
    cluster = await startCluster({
      size: 2,
      fake,
      leaseSeconds: LEASE_SECONDS,
      env: { COGNITION_RATE_LIMIT_REQUESTS_PER_MINUTE: '6' },
    });
  }, 90_000);
  afterAll(async () => {
    await cluster?.close();
    await fake?.close();
  });

  it('counts one budget per tenant whichever node takes the call', async () => {
    // Counting windows are whole minutes: start well inside one.
    const intoMinute = Date.now() % 60_000;
    if (intoMinute > 50_000) await new Promise((r) => setTimeout(r, 60_000 - intoMinute + 100));
    const statuses: number[] = [];
    for (const node of [0, 1, 0, 1, 0, 1]) {
      statuses.push((await http(cluster.nodeUrl(node), 'GET', '/sessions')).status);
    }
    expect(statuses).toEqual([200, 200, 200, 200, 200, 200]);
    const over = await http(cluster.nodeUrl(0), 'GET', '/sessions');
    expect(over.status).toBe(429);
    expect(over.json?.['code']).toBe('RATE_LIMITED');
    expect(Number(over.headers.get('retry-after'))).toBeGreaterThan(0);
    expect((await http(cluster.url, 'GET', '/sessions')).status).toBe(429);
    // Health and readiness stay open.
    expect((await http(cluster.nodeUrl(1), 'GET', '/health')).status).toBe(200);
  }, 90_000);
});
