import type { AgentEventEnvelope } from '@cognition/contracts';
import { isTerminalEvent } from '@cognition/contracts';
import type { EventLog } from '../../events/event-log';
import { runIdOfEventId, seqOfEventId } from '../../ids';

export interface EventStreamParams {
  log: EventLog;
  sessionId: string;
  /** The run whose terminal event ends the stream; null: end after the replay (unless `endless`). */
  targetRunId: string | null;
  /**
   * With no target run: follow the session's events until a signal aborts, run after run (a
   * thread's join stream), re-reading the stored log every `pollMs` for what the fan-out missed.
   */
  endless?: boolean;
  /** Only events of this run are delivered (null: every run of the session). */
  onlyRunId: string | null;
  /** Deliver events with ids greater than this (undefined: everything the log holds). */
  cursor: string | undefined;
  /** When resuming, the id the client last saw: a `reconnected` event is delivered first. */
  lastEventId: string | undefined;
  /**
   * An event the log does not hold, delivered before the replay (the `queued` event of a
   * pending run); later events with ids up to its id are not delivered.
   */
  prelude?: AgentEventEnvelope;
  /** Whether the run is executing in this process (its terminal event is still to come here). */
  isLocal(runId: string): boolean;
  /** Whether storage still lists the run as active (e.g. executing on another node). */
  isActive(runId: string): Promise<boolean>;
  /**
   * Appends the terminal event of a run that ended without one in the log (its process died
   * between storing the run's end and its last events): what a stream that waited `endWaitMs`
   * for them delivers instead of ending without an end.
   */
  repairEnd(runId: string): Promise<void>;
  /**
   * The end of a run that ended without ever starting (cancelled while it waited behind
   * another), or null for any other run. Such a run has no event in the log, and none is
   * written for it: its id would sort after events the session's active run is still to emit.
   */
  unstartedEnd(runId: string): Promise<AgentEventEnvelope | null>;
  signals: readonly AbortSignal[];
  /**
   * How often a waiting stream re-checks its run: one executed elsewhere, or one executed here
   * until another node took it over.
   */
  pollMs: number;
  /**
   * How long a stream waits for the last events of a run that ended on another node. That node
   * stores the run's end first (so a client reading `done` can send at once) and its last events
   * after: under load that can take seconds, not only when the node died.
   */
  endWaitMs: number;
}

/** A run that ended on another node: how often to look for its last events. */
const END_CHECK_MS = 200;
/**
 * How long a follower waits for the last events of a run that ended on another node before
 * repairing its end: far above what a busy node takes between storing a run's end and its last
 * events (benchmark 9b lost one turn in 200 to the 2 s this replaced: its stream ended without
 * `done`).
 */
export const END_WAIT_MS = 15_000;

/**
 * Subscribes at once (so nothing appended from now on is missed, even before iteration starts),
 * then on iteration replays the log after the cursor and follows live events, de-duplicated by
 * id, until the target run's terminal event, or its `interrupt` while it waits for a decision.
 * Ends early, without error, when a signal aborts.
 * The consumer must iterate to the end, `return()` the iterator, or abort a signal: that is what
 * releases the subscription.
 */
export function openEventStream(
  p: EventStreamParams,
): AsyncGenerator<AgentEventEnvelope, void, undefined> {
  return follow(new OpenStream(p));
}

/**
 * One open stream's state, shared by its log subscription and its generator. A class and
 * module-level generators rather than closures and a generator declared per call: an idle
 * stream (benchmark 4 holds 1,000) then keeps one object, not a dozen closures with their
 * contexts, and no generator function of its own (each with a prototype and an object shape).
 */
class OpenStream {
  readonly queue: AgentEventEnvelope[] = [];
  /** The id of the last event delivered or skipped: later events only. */
  last: string | undefined;
  /** Resolves the generator's wait for events (null while it is not waiting). */
  private wake: (() => void) | null = null;
  /** The generator is parked waiting for events: the consumer has read everything. */
  private waiting = false;
  /**
   * Events that reached a parked generator. A log publishes a whole flush at once (the durable
   * log's group commit), so several can arrive together for a consumer that keeps up: they are
   * not a backlog, and are delivered one by one. Only events that came while the consumer was
   * busy with an earlier one are merged (`coalesceTokens`). Made with the first such event.
   */
  private fresh: WeakSet<AgentEventEnvelope> | undefined;
  private readonly unsubscribe: () => void;
  readonly notify = (): void => {
    const resolve = this.wake;
    this.wake = null;
    resolve?.();
  };

  constructor(readonly p: EventStreamParams) {
    this.last = p.cursor;
    this.unsubscribe = p.log.subscribe(p.sessionId, (envelope) => {
      this.queue.push(envelope);
      if (this.waiting) (this.fresh ??= new WeakSet()).add(envelope);
      this.notify();
    });
    for (const signal of p.signals) signal.addEventListener('abort', this.notify);
  }

  stopped(): boolean {
    return this.p.signals.some((signal) => signal.aborted);
  }

  isFresh(envelope: AgentEventEnvelope): boolean {
    return this.fresh?.has(envelope) ?? false;
  }

  release(): void {
    this.unsubscribe();
    for (const signal of this.p.signals) signal.removeEventListener('abort', this.notify);
  }

  /**
   * For one candidate event: skip it, yield it, yield it and end, or yield it and end unless
   * the run goes on (`interrupt`: it paused for a decision, and may have been resumed since).
   */
  classify(envelope: AgentEventEnvelope): 'skip' | 'yield' | 'yield-end' | 'yield-pause' {
    if (this.last !== undefined && envelope.id <= this.last) return 'skip';
    this.last = envelope.id;
    if (this.p.onlyRunId !== null && envelope.runId !== this.p.onlyRunId) return 'skip';
    if (envelope.runId !== this.p.targetRunId) return 'yield';
    if (isTerminalEvent(envelope.event)) return 'yield-end';
    return envelope.event.type === 'interrupt' ? 'yield-pause' : 'yield';
  }

  /** After a paused run's `interrupt`: whether it resumed (later events, or active again). */
  async resumedAfter(
    envelope: AgentEventEnvelope,
    later: readonly AgentEventEnvelope[],
  ): Promise<boolean> {
    return later.some((e) => e.runId === envelope.runId) || (await this.p.isActive(envelope.runId));
  }

  /**
   * Parks the generator until an event, an abort or `pollMs` (re-checking a run executed
   * elsewhere); `woke` undoes it. Not an async method: the generator awaits the promise itself,
   * one suspended frame fewer per idle stream.
   */
  park(): { parked: Promise<void>; timer: NodeJS.Timeout } {
    this.waiting = true;
    const parked = new Promise<void>((resolve) => {
      this.wake = resolve;
    });
    return { parked, timer: setTimeout(this.notify, this.p.pollMs).unref() };
  }

  woke(timer: NodeJS.Timeout): void {
    clearTimeout(timer);
    this.waiting = false;
  }
}

async function* follow(s: OpenStream): AsyncGenerator<AgentEventEnvelope, void, undefined> {
  const { p, queue } = s;
  try {
    // The replay in a generator of its own, so the events read for it are released once it is
    // done instead of staying in this generator's frame for as long as the stream is open.
    if (yield* replay(s)) return;
    /** Once the followed run ended elsewhere: until when to re-read the log for its end. */
    let endBy: number | null = null;
    let repaired = false;
    for (;;) {
      if (s.stopped()) return;
      // Read before draining: if the run is no longer local, its terminal event (if any) was
      // appended before, hence is already queued.
      const local = p.targetRunId !== null && p.isLocal(p.targetRunId);
      while (queue.length > 0) {
        const next = queue[0];
        if (next && s.last !== undefined && skipsAhead(s.last, next.id)) {
          // A live event arrived past a gap (a fan-out across nodes dropped some, e.g. while
          // Redis was down): the stored log has the missing ones, delivered first.
          const missing = (await p.log.readAfter(p.sessionId, s.last)).events.filter(
            (e) => e.id < next.id,
          );
          queue.unshift(...missing);
        }
        const envelope = queue.shift();
        if (!envelope) break;
        const verdict = s.classify(envelope);
        if (verdict === 'skip') continue;
        // Events queue up only while the consumer is not reading (a slow client, its socket
        // full): a consumer that keeps up gets every token as it comes, never later.
        const merged = s.isFresh(envelope)
          ? { envelope, taken: 0 }
          : coalesceTokens(envelope, queue);
        if (merged.taken > 0) {
          queue.splice(0, merged.taken);
          s.last = merged.envelope.id;
        }
        yield merged.envelope;
        if (verdict === 'yield-end') return;
        if (verdict === 'yield-pause' && !(await s.resumedAfter(envelope, queue))) return;
        if (s.stopped()) return;
      }
      if (p.targetRunId === null) {
        if (!p.endless) return;
      } else if (!local && !(await p.isActive(p.targetRunId))) {
        if (queue.length > 0) continue;
        // Its node stores the run's end before its last events: read what the log has.
        const rest = (await p.log.readAfter(p.sessionId, s.last)).events;
        if (rest.length > 0) {
          queue.push(...rest);
          continue;
        }
        const unstarted = await p.unstartedEnd(p.targetRunId);
        if (unstarted) {
          yield unstarted;
          return;
        }
        endBy ??= Date.now() + p.endWaitMs;
        if (Date.now() < endBy) {
          await new Promise((resolve) => setTimeout(resolve, END_CHECK_MS).unref());
          continue;
        }
        if (repaired) return;
        // Its node is gone (or far too slow): the end is written from what storage holds.
        repaired = true;
        await p.repairEnd(p.targetRunId);
        continue;
      }
      if (queue.length > 0 || s.stopped()) continue;
      // Polled even while the run executes here: it can be taken over by another node (this
      // one lost its lease) and end there, with nothing local left to publish its events.
      const { parked, timer } = s.park();
      await parked;
      s.woke(timer);
      const elsewhere = p.targetRunId === null || !p.isLocal(p.targetRunId);
      if (elsewhere && queue.length === 0 && !s.stopped()) {
        // A run executed on another node reaches this one through the log's fan-out; should
        // that drop an event, the stored log still has it.
        queue.push(...(await p.log.readAfter(p.sessionId, s.last)).events);
      }
    }
  } finally {
    s.release();
  }
}

/**
 * The stream's start: the `reconnected` event of a resume, the prelude, then the log as stored
 * after the cursor, event by event (merging is for the live queue only). Returns whether the
 * stream ends there.
 */
async function* replay(s: OpenStream): AsyncGenerator<AgentEventEnvelope, boolean, undefined> {
  const { p } = s;
  const stored = await p.log.readAfter(p.sessionId, p.cursor);
  if (s.stopped()) return true;
  if (p.lastEventId !== undefined) {
    yield {
      id: p.lastEventId,
      sessionId: p.sessionId,
      runId: p.lastEventId.slice(0, p.lastEventId.lastIndexOf(':')),
      at: new Date().toISOString(),
      event: { type: 'reconnected', last_event_id: p.lastEventId, truncated: stored.truncated },
    };
  }
  if (p.prelude) {
    yield p.prelude;
    if (s.last === undefined || p.prelude.id > s.last) s.last = p.prelude.id;
  }
  for (const [index, envelope] of stored.events.entries()) {
    if (s.stopped()) return true;
    const verdict = s.classify(envelope);
    if (verdict === 'skip') continue;
    yield envelope;
    if (verdict === 'yield-end') return true;
    if (verdict === 'yield-pause') {
      if (!(await s.resumedAfter(envelope, stored.events.slice(index + 1)))) return true;
    }
  }
  return false;
}

/**
 * `first` and the token events right behind it in `pending` that the consumer has not read
 * yet, as one token event: their text joined, the id and `at` of the last one. Only events of
 * the same run with consecutive sequence numbers are taken (never across a gap, a non-token
 * event or another run), so the merged event stands exactly for those events: a client resuming
 * from its id continues after all of them, and the text is the same. `taken`: how many of
 * `pending` it took.
 */
export function coalesceTokens(
  first: AgentEventEnvelope,
  pending: readonly AgentEventEnvelope[],
): { envelope: AgentEventEnvelope; taken: number } {
  if (first.event.type !== 'token') return { envelope: first, taken: 0 };
  let content = first.event.content;
  let id = first.id;
  let at = first.at;
  let seq = seqOfEventId(id);
  let taken = 0;
  for (let i = 0; i < pending.length && seq !== null; i += 1) {
    const next = pending[i] as AgentEventEnvelope;
    if (next.runId !== first.runId || next.event.type !== 'token') break;
    if (seqOfEventId(next.id) !== seq + 1) break;
    content += next.event.content;
    id = next.id;
    at = next.at;
    seq += 1;
    taken += 1;
  }
  if (taken === 0) return { envelope: first, taken: 0 };
  return { envelope: { ...first, id, at, event: { type: 'token', content } }, taken };
}

/** Whether `id` follows `last` in the same run with sequence numbers missing in between. */
function skipsAhead(last: string, id: string): boolean {
  const run = runIdOfEventId(last);
  if (run === null || run !== runIdOfEventId(id)) return false;
  const lastSeq = seqOfEventId(last);
  const seq = seqOfEventId(id);
  return lastSeq !== null && seq !== null && seq > lastSeq + 1;
}
