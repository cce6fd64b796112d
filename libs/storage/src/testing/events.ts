import type { AgentEvent, AgentEventEnvelope } from '@cognition/contracts';
import type { SuiteContext } from './context';

const RUN_A = 'run_0000000001000000aaaaaaaaaa';
const RUN_B = 'run_0000000002000000bbbbbbbbbb';

/** Emission times in the past, a second apart per seq: what the store keeps is not its clock. */
const EMITTED = Date.parse('2026-03-04T05:06:07.089Z');

function envelope(sessionId: string, runId: string, seq: number, event?: AgentEvent) {
  const value: AgentEventEnvelope = {
    id: `${runId}:${String(seq).padStart(9, '0')}`,
    sessionId,
    runId,
    at: new Date(EMITTED + seq * 1001 + (runId === RUN_B ? 7 : 0)).toISOString(),
    event: event ?? { type: 'token', content: `t${seq}` },
  };
  return value;
}

export function eventTests(ctx: SuiteContext): void {
  describe('events', () => {
    it('lists a session’s events after a cursor in id order, page by page, exactly as appended', async () => {
      const s = await ctx.backend.sessions.create({}, {});
      const other = await ctx.backend.sessions.create({}, {});
      const done: AgentEvent = {
        type: 'done',
        assistant_data: null,
      };
      const later = [envelope(s.id, RUN_B, 1), envelope(s.id, RUN_B, 2, done)];
      const earlier = [1, 2, 3].map((i) => envelope(s.id, RUN_A, i));
      earlier[1] = envelope(s.id, RUN_A, 2, { type: 'token', content: 'é 😀 "q"\n\t\\ \u0000x' });
      // Appended out of order: listing is by id, not by arrival.
      await ctx.backend.events.append(later);
      await ctx.backend.events.append(earlier);
      await ctx.backend.events.append([envelope(other.id, RUN_A, 1)]);
      const all = [...earlier, ...later];
      expect(await ctx.backend.events.listAfter(s.id, undefined, 100)).toEqual({
        events: all,
        evictedUpTo: null,
      });
      expect((await ctx.backend.events.listAfter(s.id, all[1]?.id, 2)).events).toEqual(
        all.slice(2, 4),
      );
      expect((await ctx.backend.events.listAfter(s.id, `${RUN_B}:`, 100)).events).toEqual(later);
      expect((await ctx.backend.events.listAfter(s.id, all[4]?.id, 100)).events).toEqual([]);
      expect((await ctx.backend.events.listAfter(other.id, undefined, 100)).events).toHaveLength(1);
    });

    it('keeps each event’s emission time `at` to the millisecond, whenever it was appended', async () => {
      const s = await ctx.backend.sessions.create({}, {});
      const times = [
        '2026-03-04T05:06:07.000Z',
        '2026-03-04T05:06:07.001Z',
        '2031-12-31T23:59:59.999Z',
      ];
      // Emitted in that order, appended in one later batch (the event log's group commit).
      const batch = times.map((at, i) => ({ ...envelope(s.id, RUN_A, i + 1), at }));
      await ctx.backend.events.append(batch);
      const listed = await ctx.backend.events.listAfter(s.id, undefined, 10);
      expect(listed.events.map((e) => e.at)).toEqual(times);
      expect((await ctx.backend.events.listAfter(s.id, batch[0]?.id, 10)).events[0]?.at).toBe(
        times[1],
      );
    });

    it('stores an id once when an append is retried, and drops events of a missing session', async () => {
      const s = await ctx.backend.sessions.create({}, {});
      const first = [envelope(s.id, RUN_A, 1), envelope(s.id, RUN_A, 2)];
      await ctx.backend.events.append(first);
      await ctx.backend.events.append([...first, envelope(s.id, RUN_A, 3)]);
      const listed = await ctx.backend.events.listAfter(s.id, undefined, 100);
      expect(listed.events.map((e) => e.id)).toEqual([1, 2, 3].map((i) => `${RUN_A}:00000000${i}`));
      await expect(
        ctx.backend.events.append([envelope('no-such-session', RUN_A, 1)]),
      ).resolves.toEqual([]);
      expect((await ctx.backend.events.listAfter('no-such-session', undefined, 10)).events).toEqual(
        [],
      );
      await expect(ctx.backend.events.append([])).resolves.toEqual([]);
    });

    it('stores one append holding several sessions’ runs interleaved (a group commit) whole', async () => {
      const [s1, s2] = [
        await ctx.backend.sessions.create({}, {}),
        await ctx.backend.sessions.create({}, {}),
      ];
      const gone = await ctx.backend.sessions.create({}, {});
      await ctx.backend.sessions.delete(gone.id, {});
      const batch: AgentEventEnvelope[] = [];
      for (let seq = 1; seq <= 300; seq += 1) {
        batch.push(envelope(s1.id, RUN_A, seq), envelope(gone.id, RUN_A, seq));
        batch.push(envelope(s2.id, RUN_B, seq));
      }
      await ctx.backend.events.append(batch);
      for (const [s, run] of [
        [s1.id, RUN_A],
        [s2.id, RUN_B],
      ] as const) {
        const listed = await ctx.backend.events.listAfter(s, undefined, 1000);
        expect(listed.events).toEqual(batch.filter((e) => e.sessionId === s));
        expect(listed.events.every((e) => e.runId === run)).toBe(true);
      }
      expect((await ctx.backend.events.listAfter(gone.id, undefined, 10)).events).toEqual([]);
    });

    it('trims to the newest events and remembers the greatest id it deleted', async () => {
      const s = await ctx.backend.sessions.create({}, {});
      const all = [1, 2, 3, 4, 5].map((i) => envelope(s.id, RUN_A, i));
      await ctx.backend.events.append(all);
      expect(await ctx.backend.events.trim(s.id, 2)).toBe(3);
      expect(await ctx.backend.events.listAfter(s.id, undefined, 100)).toEqual({
        events: all.slice(3),
        evictedUpTo: all[2]?.id,
      });
      expect(await ctx.backend.events.trim(s.id, 2)).toBe(0);
      expect((await ctx.backend.events.listAfter(s.id, undefined, 100)).evictedUpTo).toBe(
        all[2]?.id,
      );
      await ctx.backend.events.append([envelope(s.id, RUN_B, 1)]);
      expect(await ctx.backend.events.trim(s.id, 1)).toBe(2);
      expect((await ctx.backend.events.listAfter(s.id, undefined, 100)).evictedUpTo).toBe(
        all[4]?.id,
      );
    });

    it('applies an append’s retention in the same write, as trim would after it', async () => {
      const [s, other, untouched] = [
        await ctx.backend.sessions.create({}, {}),
        await ctx.backend.sessions.create({}, {}),
        await ctx.backend.sessions.create({}, {}),
      ];
      const stored = [1, 2, 3].map((i) => envelope(s.id, RUN_A, i));
      await ctx.backend.events.append(stored);
      await ctx.backend.events.append([1, 2].map((i) => envelope(untouched.id, RUN_A, i)));
      // A retried id (already stored), new ones, and a batch larger than what is kept.
      const batch = [
        ...stored.slice(2),
        ...[1, 2].map((i) => envelope(s.id, RUN_B, i)),
        ...[1, 2, 3, 4].map((i) => envelope(other.id, RUN_B, i)),
      ];
      await ctx.backend.events.append(batch, { sessionIds: [s.id, other.id], keep: 2 });
      expect(await ctx.backend.events.listAfter(s.id, undefined, 100)).toEqual({
        events: [envelope(s.id, RUN_B, 1), envelope(s.id, RUN_B, 2)],
        evictedUpTo: stored[2]?.id,
      });
      expect(await ctx.backend.events.listAfter(other.id, undefined, 100)).toEqual({
        events: [3, 4].map((i) => envelope(other.id, RUN_B, i)),
        evictedUpTo: envelope(other.id, RUN_B, 2).id,
      });
      expect(await ctx.backend.events.listAfter(untouched.id, undefined, 100)).toMatchObject({
        evictedUpTo: null,
      });
      expect(
        (await ctx.backend.events.listAfter(untouched.id, undefined, 100)).events,
      ).toHaveLength(2);
      // Nothing beyond `keep`: the mark stays where it was.
      await ctx.backend.events.append([], { sessionIds: [s.id], keep: 5 });
      await ctx.backend.events.append([envelope(s.id, RUN_B, 3)], { sessionIds: [s.id], keep: 5 });
      expect(await ctx.backend.events.listAfter(s.id, undefined, 100)).toEqual({
        events: [1, 2, 3].map((i) => envelope(s.id, RUN_B, i)),
        evictedUpTo: stored[2]?.id,
      });
    });

    it('deletes a session’s events and their eviction mark with the session', async () => {
      const s = await ctx.backend.sessions.create({}, {});
      await ctx.backend.events.append([1, 2, 3].map((i) => envelope(s.id, RUN_A, i)));
      await ctx.backend.events.trim(s.id, 1);
      expect(await ctx.backend.sessions.delete(s.id, {})).toBe(true);
      expect(await ctx.backend.events.listAfter(s.id, undefined, 100)).toEqual({
        events: [],
        evictedUpTo: null,
      });
    });
  });
}
