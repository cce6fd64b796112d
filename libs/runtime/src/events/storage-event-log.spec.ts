import { randomUUID } from 'node:crypto';
import type { AgentEventEnvelope } from '@cognition/contracts';
import type { EventStore, StorageBackend } from '@cognition/storage';
import { StorageError } from '@cognition/storage';
import { createMemoryStorage } from '@cognition/storage-memory';
import { eventId } from '../ids';
import { runEventLogConformance } from '../testing/event-log-conformance';
import { InMemoryEventLog } from './event-log';
import { StorageEventLog } from './storage-event-log';

runEventLogConformance('InMemoryEventLog', ({ retain }) => {
  const log = new InMemoryEventLog({ bufferSize: retain });
  return Promise.resolve({
    log,
    newSession: () => Promise.resolve(randomUUID()),
    deleteSession: () => Promise.resolve(),
    cleanup: () => Promise.resolve(),
  });
});

async function memoryBacked(retain: number) {
  const storage = createMemoryStorage();
  await storage.initialize();
  return {
    storage,
    log: new StorageEventLog({ store: storage.events, retainPerSession: retain }),
    newSession: async () => (await storage.sessions.create({}, {})).id,
    deleteSession: async (id: string) => {
      await storage.sessions.delete(id, {});
    },
    cleanup: () => storage.close(),
  };
}

runEventLogConformance('StorageEventLog (memory storage)', ({ retain }) => memoryBacked(retain));

/** An EventStore whose appends wait until released, recording each batch. */
class GatedStore implements EventStore {
  readonly batches: string[][] = [];
  private gates: (() => void)[] = [];
  failNext: Error | null = null;

  constructor(private readonly inner: EventStore) {}

  async append(...args: Parameters<EventStore['append']>) {
    this.batches.push(args[0].map((e) => e.id));
    await new Promise<void>((resolve) => this.gates.push(resolve));
    if (this.failNext) {
      const error = this.failNext;
      this.failNext = null;
      throw error;
    }
    return this.inner.append(...args);
  }

  listAfter(...args: Parameters<EventStore['listAfter']>) {
    return this.inner.listAfter(...args);
  }

  trim(...args: Parameters<EventStore['trim']>) {
    return this.inner.trim(...args);
  }

  /** Lets the oldest waiting append proceed. */
  release(): void {
    this.gates.shift()?.();
  }

  get waiting(): number {
    return this.gates.length;
  }
}

/** An EventStore recording each batch it writes. */
class RecordingStore implements EventStore {
  readonly batches: string[][] = [];

  constructor(private readonly inner: EventStore) {}

  append(...args: Parameters<EventStore['append']>) {
    this.batches.push(args[0].map((e) => e.id));
    return this.inner.append(...args);
  }

  listAfter(...args: Parameters<EventStore['listAfter']>) {
    return this.inner.listAfter(...args);
  }

  trim(...args: Parameters<EventStore['trim']>) {
    return this.inner.trim(...args);
  }
}

describe('StorageEventLog', () => {
  let storage: StorageBackend;
  let sessionId: string;
  beforeEach(async () => {
    storage = createMemoryStorage();
    await storage.initialize();
    sessionId = (await storage.sessions.create({}, {})).id;
  });
  afterEach(() => storage.close());

  const env = (seq: number): AgentEventEnvelope => ({
    id: eventId('run_a', seq),
    sessionId,
    runId: 'run_a',
    at: '2026-01-01T00:00:00.000Z',
    event: { type: 'token', content: `t${seq}` },
  });

  const until = async (predicate: () => boolean) => {
    while (!predicate()) await new Promise((resolve) => setImmediate(resolve));
  };

  it('replays to a new instance over the same storage (a restarted process)', async () => {
    const before = new StorageEventLog({ store: storage.events });
    await Promise.all([1, 2, 3].map((i) => before.append(env(i))));
    const after = new StorageEventLog({ store: storage.events });
    expect(await after.readAfter(sessionId, eventId('run_a', 1))).toEqual({
      events: [env(2), env(3)],
      truncated: false,
    });
  });

  it('publishes an event only once it is stored, grouping appends made during a write', async () => {
    const store = new GatedStore(storage.events);
    const log = new StorageEventLog({ store });
    const published: string[] = [];
    log.subscribe(sessionId, (e) => published.push(e.id));
    const first = log.append(env(1));
    await until(() => store.waiting === 1);
    const rest = [2, 3, 4].map((i) => log.append(env(i)));
    expect(published).toEqual([]);
    store.release();
    await first;
    expect(published).toEqual([eventId('run_a', 1)]);
    await until(() => store.waiting === 1);
    store.release();
    await Promise.all(rest);
    expect(store.batches).toEqual([[1], [2, 3, 4]].map((b) => b.map((i) => eventId('run_a', i))));
    expect(published).toHaveLength(4);
  });

  it('drops (never publishes) the events of a run the store fenced out; others of the batch go on', async () => {
    const { run } = await storage.runs.create({ sessionId });
    const { run: other } = await storage.runs.create({
      sessionId: (await storage.sessions.create({}, {})).id,
    });
    const now = Date.now();
    const claimA = await storage.runs.claim(run.id, 'node-a', new Date(now), new Date(now + 10));
    const claimO = await storage.runs.claim(other.id, 'node-a', new Date(now), new Date(now + 1e6));
    const stale = { runId: run.id, ownerNode: 'node-a', claim: claimA ?? 0 };
    const held = { runId: other.id, ownerNode: 'node-a', claim: claimO ?? 0 };
    const of = (r: { id: string; sessionId: string }, seq: number): AgentEventEnvelope => ({
      id: eventId(r.id, seq),
      sessionId: r.sessionId,
      runId: r.id,
      at: '2026-01-01T00:00:00.000Z',
      event: { type: 'token', content: `t${seq}` },
    });
    // Node B takes the run over once A's lease ran out.
    expect(
      await storage.runs.claim(run.id, 'node-b', new Date(now + 20), new Date(now + 1e6)),
    ).toEqual(expect.any(Number));
    const store = new RecordingStore(storage.events);
    const log = new StorageEventLog({ store, flushIntervalMs: 0 });
    const published: string[] = [];
    log.subscribe(run.sessionId, (e) => published.push(e.id));
    log.subscribe(other.sessionId, (e) => published.push(e.id));
    const results = await Promise.allSettled([
      log.append(of(run, 1), stale),
      log.append(of(other, 1), held),
    ]);
    expect(results[0]).toMatchObject({ status: 'rejected', reason: { fenced: true } });
    expect(results[1]).toMatchObject({ status: 'fulfilled' });
    expect(published).toEqual([eventId(other.id, 1)]);
    // Later appends under the refused claim are refused without a write.
    const writes = store.batches.length;
    await expect(log.append(of(run, 2), stale)).rejects.toMatchObject({ fenced: true });
    expect(store.batches).toHaveLength(writes);
    expect(published).toEqual([eventId(other.id, 1)]);
    expect((await storage.events.listAfter(run.sessionId, undefined, 10)).events).toEqual([]);
  });

  it('retries a failed write and publishes the event only once it is stored', async () => {
    const store = new GatedStore(storage.events);
    const log = new StorageEventLog({ store });
    const published: string[] = [];
    log.subscribe(sessionId, (e) => published.push(e.id));
    store.failNext = new StorageError('UNAVAILABLE', 'database restarting');
    const appended = log.append(env(1));
    await until(() => store.waiting === 1);
    store.release();
    // Failed: nobody received it (a node dying now leaves no id a client holds unstored).
    await until(() => store.waiting === 1);
    expect(published).toEqual([]);
    store.release();
    await appended;
    expect(published).toEqual([eventId('run_a', 1)]);
    expect((await log.readAfter(sessionId)).events).toEqual([env(1)]);
  });

  it('drops a write still failing after retryForMs: rejected, never published', async () => {
    const store = new GatedStore(storage.events);
    const log = new StorageEventLog({ store, retryForMs: 0 });
    const published: string[] = [];
    log.subscribe(sessionId, (e) => published.push(e.id));
    store.failNext = new StorageError('UNAVAILABLE', 'database down');
    const appended = log.append(env(1));
    await until(() => store.waiting === 1);
    store.release();
    await expect(appended).rejects.toThrow('database down');
    expect(published).toEqual([]);
    expect((await log.readAfter(sessionId)).events).toEqual([]);
  });

  it('does not retry a refusal of the events themselves', async () => {
    const store = new GatedStore(storage.events);
    const log = new StorageEventLog({ store });
    store.failNext = new StorageError('PAYLOAD_TOO_LARGE', 'event too large');
    const appended = log.append(env(1));
    await until(() => store.waiting === 1);
    store.release();
    await expect(appended).rejects.toThrow('event too large');
    expect(store.batches).toHaveLength(1);
  });

  describe('abandon (a run taken over by another node)', () => {
    const ofRun = (run: string, seq: number): AgentEventEnvelope => ({
      ...env(seq),
      id: eventId(run, seq),
      runId: run,
    });

    it("drops the run's events waiting for a retry or queued; other runs are written", async () => {
      const store = new GatedStore(storage.events);
      const log = new StorageEventLog({ store, flushIntervalMs: 0 });
      const published: string[] = [];
      log.subscribe(sessionId, (e) => published.push(e.id));
      store.failNext = new StorageError('UNAVAILABLE', 'database restarting');
      const a1 = log.append(ofRun('run_a', 1));
      await until(() => store.waiting === 1);
      const a2 = log.append(ofRun('run_a', 2));
      const b1 = log.append(ofRun('run_b', 1));
      store.release(); // fails: [a1] waits for its retry, [a2, b1] queued behind it
      await new Promise((resolve) => setImmediate(resolve));
      await expect(log.abandon(['run_a'], 1_000)).resolves.toBe(true);
      await expect(a1).rejects.toThrow(/taken over/);
      await until(() => store.waiting === 1);
      store.release();
      await b1;
      await expect(a2).rejects.toThrow(/taken over/);
      expect(store.batches).toEqual([[eventId('run_a', 1)], [eventId('run_b', 1)]]);
      expect(published).toEqual([eventId('run_b', 1)]);
      expect((await log.readAfter(sessionId)).events.map((e) => e.id)).toEqual([
        eventId('run_b', 1),
      ]);
    });

    it('waits for a write of the run in flight, and says when it is still in flight', async () => {
      const store = new GatedStore(storage.events);
      const log = new StorageEventLog({ store, flushIntervalMs: 0 });
      const a1 = log.append(ofRun('run_a', 1));
      await until(() => store.waiting === 1);
      await expect(log.abandon(['run_a'], 20)).resolves.toBe(false);
      const quiet = log.abandon(['run_a'], 60_000);
      store.release();
      await expect(quiet).resolves.toBe(true);
      // Stored by the write already under way, but never published nor reported stored.
      await expect(a1).rejects.toThrow(/taken over/);
    });

    it("has nothing to wait for when no write holds the run's events", async () => {
      const store = new GatedStore(storage.events);
      const log = new StorageEventLog({ store, flushIntervalMs: 0 });
      const b1 = log.append(ofRun('run_b', 1));
      await until(() => store.waiting === 1);
      await expect(log.abandon(['run_a'], 60_000)).resolves.toBe(true);
      store.release();
      await b1;
    });
  });

  describe('group commit (issue 27)', () => {
    const token = (sid: string, run: string, seq: number): AgentEventEnvelope => ({
      id: eventId(run, seq),
      sessionId: sid,
      runId: run,
      at: '2026-01-01T00:00:00.000Z',
      event: { type: 'token', content: `t${seq}` },
    });
    const end = (sid: string, run: string, seq: number): AgentEventEnvelope => ({
      ...token(sid, run, seq),
      event: { type: 'done', assistant_data: null },
    });

    it('writes the events of every run queued within the interval in one batch, in order', async () => {
      const other = (await storage.sessions.create({}, {})).id;
      const store = new RecordingStore(storage.events);
      // A long interval: only the terminal event can start the write.
      const log = new StorageEventLog({ store, flushIntervalMs: 60_000 });
      const appends: Promise<void>[] = [];
      for (const seq of [1, 2, 3]) {
        appends.push(log.append(token(sessionId, 'run_a', seq)));
        appends.push(log.append(token(other, 'run_b', seq)));
      }
      appends.push(log.append(end(sessionId, 'run_a', 4)));
      await Promise.all(appends);
      expect(store.batches).toEqual([
        ['1', '1', '2', '2', '3', '3', '4'].map((seq, i) =>
          eventId(i % 2 === 0 || i === 6 ? 'run_a' : 'run_b', Number(seq)),
        ),
      ]);
      expect((await log.readAfter(other)).events.map((e) => e.id)).toEqual(
        [1, 2, 3].map((i) => eventId('run_b', i)),
      );
    });

    it('writes a full batch without waiting for the interval', async () => {
      const store = new RecordingStore(storage.events);
      const log = new StorageEventLog({ store, flushIntervalMs: 60_000, maxBatch: 3 });
      await Promise.all([1, 2, 3].map((i) => log.append(env(i))));
      expect(store.batches).toEqual([[1, 2, 3].map((i) => eventId('run_a', i))]);
    });

    it('writes a lone event once the interval passed', async () => {
      const store = new RecordingStore(storage.events);
      const log = new StorageEventLog({ store, flushIntervalMs: 5 });
      await log.append(env(1));
      expect(store.batches).toEqual([[eventId('run_a', 1)]]);
    });

    it('reports a failed write to every run whose events it held, and goes on after it', async () => {
      const other = (await storage.sessions.create({}, {})).id;
      const store = new GatedStore(storage.events);
      const log = new StorageEventLog({ store, flushIntervalMs: 60_000, retryForMs: 0 });
      const published: string[] = [];
      log.subscribe(sessionId, (e) => published.push(e.id));
      store.failNext = new Error('database down');
      const a = log.append(token(sessionId, 'run_a', 1));
      const b = log.append(end(other, 'run_b', 1));
      await until(() => store.waiting === 1);
      store.release();
      await expect(a).rejects.toThrow('database down');
      await expect(b).rejects.toThrow('database down');
      expect(published).toEqual([]);
      const next = log.append(end(sessionId, 'run_a', 2));
      await until(() => store.waiting === 1);
      store.release();
      await next;
      expect(published).toEqual([eventId('run_a', 2)]);
      expect((await log.readAfter(sessionId)).events.map((e) => e.id)).toEqual([
        eventId('run_a', 2),
      ]);
    });

    it('holds later events behind a batch being retried, then writes them in order', async () => {
      const store = new GatedStore(storage.events);
      const log = new StorageEventLog({ store, flushIntervalMs: 0 });
      const published: string[] = [];
      log.subscribe(sessionId, (e) => published.push(e.id));
      store.failNext = new Error('connection reset');
      const first = log.append(env(1));
      await until(() => store.waiting === 1);
      const second = log.append(env(2));
      store.release(); // fails: batch [1] is retried before [2] is written
      await until(() => store.waiting === 1);
      expect(store.batches).toEqual([[eventId('run_a', 1)], [eventId('run_a', 1)]]);
      store.release();
      await first;
      await until(() => store.waiting === 1);
      store.release();
      await second;
      expect(published).toEqual([1, 2].map((i) => eventId('run_a', i)));
    });

    it('bounds the queue: an append beyond maxQueued is refused in its turn, never published', async () => {
      const store = new GatedStore(storage.events);
      const log = new StorageEventLog({ store, flushIntervalMs: 0, maxQueued: 2 });
      const published: string[] = [];
      log.subscribe(sessionId, (e) => published.push(e.id));
      const first = log.append(env(1));
      await until(() => store.waiting === 1);
      const second = log.append(env(2));
      const third = log.append(env(3));
      store.release();
      await first;
      expect(published).toEqual([eventId('run_a', 1)]);
      await until(() => store.waiting === 1);
      store.release();
      await second;
      await expect(third).rejects.toThrow(/overloaded/);
      expect(published).toEqual([1, 2].map((i) => eventId('run_a', i)));
      expect(store.batches).toEqual([[eventId('run_a', 1)], [eventId('run_a', 2)]]);
      expect((await log.readAfter(sessionId)).events).toEqual([env(1), env(2)]);
    });
  });

  it('applies retention when a run ends, never in the middle of a run', async () => {
    const log = new StorageEventLog({ store: storage.events, retainPerSession: 2 });
    for (const i of [1, 2, 3, 4]) await log.append(env(i));
    expect((await log.readAfter(sessionId)).events).toHaveLength(4);
    await log.append({ ...env(5), event: { type: 'error', code: 'ABORTED', message: 'x' } });
    expect(await log.readAfter(sessionId)).toMatchObject({ truncated: true });
    expect((await log.readAfter(sessionId)).events.map((e) => e.id)).toEqual([
      eventId('run_a', 4),
      eventId('run_a', 5),
    ]);
  });

  it('rejects a non-positive retention', () => {
    expect(() => new StorageEventLog({ store: storage.events, retainPerSession: 0 })).toThrow(
      RangeError,
    );
  });
});
