import type { AgentEvent, AgentEventEnvelope } from '@cognition/contracts';
import type { EventLog } from '../events/event-log';
import { eventId, newRunId } from '../ids';

/** A fresh event log per test, keeping `retain` events per session. */
export interface EventLogHarness {
  log: EventLog;
  /** A session events may be appended to (implementations backed by storage need its row). */
  newSession(): Promise<string>;
  /** Deletes the session as the API does before `dropSession` (storage: the row). */
  deleteSession(sessionId: string): Promise<void>;
  cleanup(): Promise<void>;
}

export type EventLogHarnessFactory = (options: { retain: number }) => Promise<EventLogHarness>;

function envelope(sessionId: string, runId: string, seq: number, event?: AgentEvent) {
  const value: AgentEventEnvelope = {
    id: eventId(runId, seq),
    sessionId,
    runId,
    // Distinct past times: a log hands back the emission time it was given, not its own clock.
    at: new Date(Date.UTC(2026, 0, 2, 3, 4, 5, seq)).toISOString(),
    event: event ?? { type: 'token', content: `t${seq}` },
  };
  return value;
}

const DONE: AgentEvent = { type: 'done', assistant_data: null };

/**
 * The invariants of the `EventLog` port (see its TSDoc), for every implementation: the
 * in-memory one, the storage-backed one on each backend, a cluster one.
 */
export function runEventLogConformance(name: string, factory: EventLogHarnessFactory): void {
  describe(`${name}: event log conformance`, () => {
    let harness: EventLogHarness | undefined;
    const open = async (retain = 100) => {
      harness = await factory({ retain });
      return harness;
    };
    afterEach(async () => {
      await harness?.cleanup();
      harness = undefined;
    });

    it('replays after a cursor in id order, keeping sessions apart', async () => {
      const { log, newSession } = await open();
      const [s1, s2] = [await newSession(), await newSession()];
      const runA = newRunId();
      const runB = newRunId();
      const first = [1, 2, 3].map((i) => envelope(s1, runA, i));
      for (const e of first) await log.append(e);
      await log.append(envelope(s2, runA, 1));
      const second = [envelope(s1, runB, 1), envelope(s1, runB, 2, DONE)];
      for (const e of second) await log.append(e);
      expect(await log.readAfter(s1)).toEqual({ events: [...first, ...second], truncated: false });
      expect(await log.readAfter(s1, first[1]?.id)).toEqual({
        events: [first[2], ...second],
        truncated: false,
      });
      expect((await log.readAfter(s1, `${runB}:`)).events).toEqual(second);
      expect((await log.readAfter(s2)).events).toHaveLength(1);
      expect(await log.readAfter(await newSession())).toEqual({ events: [], truncated: false });
    });

    it('applies appends in call order without waiting, and publishes each once to subscribers', async () => {
      const { log, newSession } = await open();
      const s = await newSession();
      const run = newRunId();
      const got: string[] = [];
      const other: string[] = [];
      const off = log.subscribe(s, (e) => got.push(e.id));
      log.subscribe(await newSession(), (e) => other.push(e.id));
      const all = Array.from({ length: 50 }, (_, i) => envelope(s, run, i + 1));
      await Promise.all(all.map((e) => log.append(e)));
      expect(got).toEqual(all.map((e) => e.id));
      expect((await log.readAfter(s)).events).toEqual(all);
      off();
      off();
      await log.append(envelope(s, run, 51));
      expect(got).toHaveLength(50);
      expect(other).toEqual([]);
    });

    it('is gap-free for a subscriber that reads after subscribing while appends go on', async () => {
      const { log, newSession } = await open();
      const s = await newSession();
      const run = newRunId();
      const all = Array.from({ length: 40 }, (_, i) => envelope(s, run, i + 1));
      const early = Promise.all(all.slice(0, 20).map((e) => log.append(e)));
      const live: string[] = [];
      log.subscribe(s, (e) => live.push(e.id));
      const replay = log.readAfter(s);
      await Promise.all([early, ...all.slice(20).map((e) => log.append(e))]);
      const seen = new Set([...(await replay).events.map((e) => e.id), ...live]);
      expect([...seen].sort()).toEqual(all.map((e) => e.id));
      expect(new Set(live).size).toBe(live.length);
    });

    // Group commit (issue 27): a durable log writes the events of every run on the node in
    // batches; these hold whatever the batching.
    it('keeps per-run order and ids when many runs append at once (batched writes)', async () => {
      const { log, newSession } = await open(1000);
      const sessions = [await newSession(), await newSession(), await newSession()];
      const runs = sessions.map(() => newRunId());
      const got = new Map<string, string[]>(sessions.map((s) => [s, []]));
      for (const s of sessions) log.subscribe(s, (e) => got.get(s)?.push(e.id));
      const expected = new Map<string, AgentEventEnvelope[]>(sessions.map((s) => [s, []]));
      const appends: Promise<void>[] = [];
      // Round-robin without waiting, as concurrent streaming runs do: 3 runs x 120 events.
      for (let seq = 1; seq <= 120; seq += 1) {
        sessions.forEach((s, i) => {
          const run = runs[i] as string;
          const e = envelope(s, run, seq, seq === 120 ? DONE : undefined);
          expected.get(s)?.push(e);
          appends.push(log.append(e));
        });
      }
      await Promise.all(appends);
      for (const s of sessions) {
        const mine = expected.get(s) ?? [];
        expect(got.get(s)).toEqual(mine.map((e) => e.id));
        expect(await log.readAfter(s)).toEqual({ events: mine, truncated: false });
        expect((await log.readAfter(s, mine[59]?.id)).events).toEqual(mine.slice(60));
      }
    });

    it('delivers an event only once a replay can return it (terminal events included)', async () => {
      const { log, newSession } = await open();
      const s = await newSession();
      const run = newRunId();
      const checks: Promise<boolean>[] = [];
      log.subscribe(s, (e) => {
        // Started inside the listener: what a client reconnecting with this id right away reads.
        checks.push(log.readAfter(s).then((r) => r.events.some((x) => x.id === e.id)));
      });
      const all = Array.from({ length: 30 }, (_, i) => envelope(s, run, i + 1));
      all.push(envelope(s, run, 31, DONE));
      await Promise.all(all.map((e) => log.append(e)));
      expect(await Promise.all(checks)).toEqual(all.map(() => true));
    });

    it('resolves a terminal append only once the terminal event is stored and delivered', async () => {
      const { log, newSession } = await open();
      const s = await newSession();
      const run = newRunId();
      const delivered: string[] = [];
      log.subscribe(s, (e) => delivered.push(e.id));
      for (const i of [1, 2, 3]) void log.append(envelope(s, run, i));
      const end = envelope(s, run, 4, DONE);
      await log.append(end);
      expect(delivered).toEqual([1, 2, 3, 4].map((i) => eventId(run, i)));
      expect((await log.readAfter(s, eventId(run, 3))).events).toEqual([end]);
    });

    it('says truncated exactly when retention evicted events after the cursor', async () => {
      const { log, newSession } = await open(3);
      const s = await newSession();
      const run = newRunId();
      const all = [1, 2, 3, 4].map((i) => envelope(s, run, i));
      all.push(envelope(s, run, 5, DONE));
      for (const e of all) await log.append(e);
      expect(await log.readAfter(s)).toEqual({ events: all.slice(2), truncated: true });
      expect((await log.readAfter(s, all[0]?.id)).truncated).toBe(true);
      expect(await log.readAfter(s, all[1]?.id)).toEqual({
        events: all.slice(2),
        truncated: false,
      });
      expect(await log.readAfter(s, all[3]?.id)).toEqual({
        events: all.slice(4),
        truncated: false,
      });
    });

    it('forgets a deleted session', async () => {
      const { log, newSession, deleteSession } = await open();
      const s = await newSession();
      await log.append(envelope(s, newRunId(), 1, DONE));
      await deleteSession(s);
      await log.dropSession(s);
      expect(await log.readAfter(s)).toEqual({ events: [], truncated: false });
    });
  });
}
