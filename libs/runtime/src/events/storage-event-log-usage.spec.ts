import type { AgentEventEnvelope, Usage } from '@cognition/contracts';
import type { EventStore, RunFence, StorageBackend } from '@cognition/storage';
import { RunFencedError } from '@cognition/storage';
import { createMemoryStorage } from '@cognition/storage-memory';
import { eventId } from '../ids';
import { StorageEventLog } from './storage-event-log';

/** An EventStore recording each write: its event ids and the runs whose usage it carried. */
class RecordingStore implements EventStore {
  readonly writes: { events: string[]; usage: string[] }[] = [];

  constructor(private readonly inner: EventStore) {}

  append(...args: Parameters<EventStore['append']>) {
    const [envelopes, , , usage] = args;
    this.writes.push({
      events: envelopes.map((e) => e.id),
      usage: (usage ?? []).map((u) => `${u.runId}:${u.usage.inputTokens}`),
    });
    return this.inner.append(...args);
  }

  listAfter(...args: Parameters<EventStore['listAfter']>) {
    return this.inner.listAfter(...args);
  }

  trim(...args: Parameters<EventStore['trim']>) {
    return this.inner.trim(...args);
  }
}

const usage = (inputTokens: number): Usage => ({
  inputTokens,
  outputTokens: 1,
  costUsd: null,
  provider: 'openai',
  model: 'gpt-4o',
  estimated: false,
});

/** `carryUsage` (issue 27): a run's usage rides in the flush of the events around it. */
describe('StorageEventLog carries a run’s usage', () => {
  let storage: StorageBackend;
  let store: RecordingStore;
  let runId: string;
  let sessionId: string;
  let fence: RunFence;
  beforeEach(async () => {
    storage = createMemoryStorage();
    await storage.initialize();
    store = new RecordingStore(storage.events);
    sessionId = (await storage.sessions.create({}, {})).id;
    runId = (await storage.runs.create({ sessionId })).run.id;
    const now = Date.now();
    const claim = await storage.runs.claim(runId, 'node-a', new Date(now), new Date(now + 1e6));
    fence = { runId, ownerNode: 'node-a', claim: claim ?? -1 };
  });
  afterEach(() => storage.close());

  const token = (seq: number): AgentEventEnvelope => ({
    id: eventId(runId, seq),
    sessionId,
    runId,
    at: '2026-01-01T00:00:00.000Z',
    event: { type: 'token', content: `t${seq}` },
  });

  it('writes the usage in the same write as the events queued with it; the latest figures win', async () => {
    const log = new StorageEventLog({ store, flushIntervalMs: 60_000 });
    const writes = [
      log.append(token(1), fence),
      log.carryUsage(runId, usage(10), fence),
      log.carryUsage(runId, usage(20), fence),
      // A terminal event starts the write at once.
      log.append({ ...token(2), event: { type: 'done', assistant_data: null } }, fence),
    ];
    await Promise.all(writes);
    expect(store.writes).toEqual([
      { events: [eventId(runId, 1), eventId(runId, 2)], usage: [`${runId}:20`] },
    ]);
    expect((await storage.runs.get(runId))?.usage).toEqual(usage(20));
  });

  it('writes a usage with no event to go with it once the interval passed', async () => {
    const log = new StorageEventLog({ store, flushIntervalMs: 5 });
    await log.carryUsage(runId, usage(7), fence);
    expect(store.writes).toEqual([{ events: [], usage: [`${runId}:7`] }]);
    expect((await storage.runs.get(runId))?.usage).toEqual(usage(7));
  });

  it('refuses the usage of a run another claim took over, with its events, and later ones at once', async () => {
    const log = new StorageEventLog({ store, flushIntervalMs: 1 });
    const now = Date.now();
    await storage.runs.claim(runId, 'node-b', new Date(now + 2e6), new Date(now + 3e6));
    const event = log.append(token(1), fence);
    const carried = log.carryUsage(runId, usage(5), fence);
    await expect(event).rejects.toBeInstanceOf(RunFencedError);
    await expect(carried).rejects.toBeInstanceOf(RunFencedError);
    expect((await storage.runs.get(runId))?.usage).toBeNull();
    const writes = store.writes.length;
    await expect(log.carryUsage(runId, usage(6), fence)).rejects.toBeInstanceOf(RunFencedError);
    expect(store.writes).toHaveLength(writes);
  });

  it('drops the usage of an abandoned run (handed over at shutdown): never written', async () => {
    const log = new StorageEventLog({ store, flushIntervalMs: 60_000 });
    const carried = log.carryUsage(runId, usage(5), fence);
    expect(await log.abandon([runId], 100)).toBe(true);
    // Another run's end starts the write: it holds nothing of the abandoned run.
    const other = { ...token(1), runId: 'run_other', id: eventId('run_other', 1) };
    await log.append({ ...other, event: { type: 'done', assistant_data: null } });
    expect(store.writes).toEqual([{ events: [eventId('run_other', 1)], usage: [] }]);
    await expect(carried).rejects.toMatchObject({ code: 'CONFLICT' });
    expect((await storage.runs.get(runId))?.usage).toBeNull();
  });
});
