import { CircuitBreakerRegistry } from '@cognition/circuit-breaker';
import type { AgentEventEnvelope } from '@cognition/contracts';
import { InMemoryEventLog, StorageEventLog, silentLogger } from '@cognition/runtime';
import type { EventStore } from '@cognition/storage';
import { Redis } from 'ioredis';
import { runEventLogConformance } from '@cognition/runtime/testing';
import { randomUUID } from 'node:crypto';
import type { EventLog } from '@cognition/runtime';
import type { RedisCluster } from './cluster';
import { connectRedisCluster } from './cluster';
import { TEST_REDIS_URL, testKeyPrefix } from './testing/test-redis';

function connect(nodeId: string, store: EventLog, keyPrefix: string) {
  return connectRedisCluster({
    url: TEST_REDIS_URL,
    nodeId,
    keyPrefix,
    store,
    breakers: new CircuitBreakerRegistry(),
    logger: silentLogger,
  });
}

const envelope = (sessionId: string, runId: string, seq: number): AgentEventEnvelope => ({
  id: `${runId}:${String(seq).padStart(9, '0')}`,
  sessionId,
  runId,
  at: '2026-01-01T00:00:00.000Z',
  event: { type: 'token', content: `t${seq}` },
});

async function until(check: () => boolean, ms = 3000): Promise<void> {
  const end = Date.now() + ms;
  while (!check()) {
    if (Date.now() > end) throw new Error('timed out');
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
}

runEventLogConformance('RedisEventLog over an in-process store', async ({ retain }) => {
  const cluster = await connect(
    'only',
    new InMemoryEventLog({ bufferSize: retain }),
    testKeyPrefix(),
  );
  return {
    log: cluster.eventLog,
    newSession: () => Promise.resolve(randomUUID()),
    deleteSession: () => Promise.resolve(),
    cleanup: () => cluster.close(),
  };
});

describe('Redis cluster: two nodes', () => {
  let a: RedisCluster;
  let b: RedisCluster;
  // Each node's store publishes to its own process's listeners only, as the storage-backed log
  // does (what one node appends reaches the other through the stream alone).
  let storeA: InMemoryEventLog;

  beforeEach(async () => {
    const prefix = testKeyPrefix();
    storeA = new InMemoryEventLog({ bufferSize: 10_000 });
    a = await connect('node-a', storeA, prefix);
    b = await connect('node-b', new InMemoryEventLog({ bufferSize: 10_000 }), prefix);
  });
  afterEach(async () => {
    await a.close();
    await b.close();
  });

  it('fans events appended on one node out to subscribers on the other, once each, in order', async () => {
    const session = randomUUID();
    const onB: string[] = [];
    const onA: string[] = [];
    b.eventLog.subscribe(session, (e) => onB.push(e.id));
    a.eventLog.subscribe(session, (e) => onA.push(e.id));
    const sent = [1, 2, 3, 4, 5].map((i) => envelope(session, 'run-1', i));
    for (const e of sent) void a.eventLog.append(e);
    await until(() => onB.length === 5);
    await new Promise((resolve) => setTimeout(resolve, 100));
    expect(onA).toEqual(sent.map((e) => e.id));
    expect(onB).toEqual(sent.map((e) => e.id));
    expect((await storeA.readAfter(session)).events.map((e) => e.id)).toEqual(
      sent.map((e) => e.id),
    );
  });

  it('delivers a cancel from one node to the run registered on the other within a second', async () => {
    const reasons: string[] = [];
    a.control.listen('run-9', (reason) => reasons.push(reason));
    const started = Date.now();
    expect(await b.control.cancel('run-9', 'aborted')).toBe(true);
    await until(() => reasons.length === 1, 1000);
    expect(Date.now() - started).toBeLessThan(1000);
    expect(reasons).toEqual(['aborted']);
    // A run registered nowhere: heard by the other node, which has nothing to cancel.
    expect(await a.control.cancel('run-unknown', 'aborted')).toBe(true);
  });

  it('reports its health', async () => {
    expect(await a.health()).toMatchObject({ status: 'ready', ok: true });
  });
});

/** The smallest EventStore: what a node's storage-backed log writes, kept in an array. */
function arrayStore(): EventStore & { rows: AgentEventEnvelope[] } {
  const rows: AgentEventEnvelope[] = [];
  return {
    rows,
    append: (envelopes) => {
      rows.push(...envelopes);
      return Promise.resolve([]);
    },
    listAfter: (sessionId, after) =>
      Promise.resolve({
        events: rows.filter(
          (e) => e.sessionId === sessionId && (after === undefined || e.id > after),
        ),
        evictedUpTo: null,
      }),
    trim: () => Promise.resolve(0),
  };
}

describe('Redis cluster: group fan-out (issue 27)', () => {
  it('sends one stream entry per flush of the storage-backed log, which the other node unpacks in order', async () => {
    const prefix = testKeyPrefix();
    // A long interval: the terminal event alone makes the flush, so all 40 events are one batch.
    const storeA = new StorageEventLog({ store: arrayStore(), flushIntervalMs: 60_000 });
    const a = await connect('node-a', storeA, prefix);
    const b = await connect('node-b', new InMemoryEventLog(), prefix);
    const redis = new Redis(TEST_REDIS_URL);
    try {
      const session = randomUUID();
      const onB: string[] = [];
      b.eventLog.subscribe(session, (e) => onB.push(e.id));
      const sent = Array.from({ length: 40 }, (_, i) => envelope(session, 'run-1', i + 1));
      sent.push({
        ...envelope(session, 'run-1', 41),
        event: { type: 'done', assistant_data: null },
      });
      await Promise.all(sent.map((e) => a.eventLog.append(e)));
      await until(() => onB.length === sent.length);
      expect(onB).toEqual(sent.map((e) => e.id));
      expect(await redis.xlen(`${prefix}events`)).toBe(1);
      // An entry of a node before issue 27 (one event per entry) is still delivered.
      const legacy = envelope(session, 'run-2', 1);
      await redis.xadd(`${prefix}events`, '*', 'n', 'old-node', 'e', JSON.stringify(legacy));
      await until(() => onB.length === sent.length + 1);
      expect(onB[sent.length]).toBe(legacy.id);
    } finally {
      await redis.del(`${prefix}events`);
      redis.disconnect();
      await a.close();
      await b.close();
    }
  });
});

describe('RedisRateLimiter', () => {
  it('shares one budget per tenant between nodes', async () => {
    const prefix = testKeyPrefix();
    const store = () => new InMemoryEventLog({ bufferSize: 10 });
    const a = await connect('node-a', store(), prefix);
    const b = await connect('node-b', store(), prefix);
    try {
      // Counting windows are whole minutes: start well inside one.
      const intoMinute = Date.now() % 60_000;
      if (intoMinute > 55_000) await new Promise((r) => setTimeout(r, 60_000 - intoMinute + 50));
      const limitsA = a.rateLimiter({ requests: 3, runs: null });
      const limitsB = b.rateLimiter({ requests: 3, runs: null });
      const taken = [
        await limitsA.take('requests', 't1'),
        await limitsB.take('requests', 't1'),
        await limitsA.take('requests', 't1'),
        await limitsB.take('requests', 't1'),
      ];
      expect(taken.map((d) => d.allowed)).toEqual([true, true, true, false]);
      expect(taken[3]?.retryAfterSeconds).toBeGreaterThan(0);
      expect((await limitsB.take('requests', 't2')).allowed).toBe(true);
      expect((await limitsB.take('runs', 't1')).allowed).toBe(true);
    } finally {
      await a.close();
      await b.close();
    }
  });
});
