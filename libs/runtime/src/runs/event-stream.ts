import type { AgentEventEnvelope } from '@cognition/contracts';
import { isTerminalEvent } from '@cognition/contracts';
import type { EventLog } from '../events/event-log';

export interface EventStreamParams {
  log: EventLog;
  sessionId: string;
  /** The run whose terminal event ends the stream; null: end after the replay. */
  targetRunId: string | null;
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
  signals: readonly AbortSignal[];
  /** How often a stream waiting on a run executed elsewhere re-checks its status. */
  pollMs: number;
}

/**
 * Subscribes at once (so nothing appended from now on is missed, even before iteration starts),
 * then on iteration replays the log after the cursor and follows live events, de-duplicated by
 * id, until the target run's terminal event. Ends early, without error, when a signal aborts.
 * The consumer must iterate to the end, `return()` the iterator, or abort a signal: that is what
 * releases the subscription.
 */
export function openEventStream(
  p: EventStreamParams,
): AsyncGenerator<AgentEventEnvelope, void, undefined> {
  const queue: AgentEventEnvelope[] = [];
  let wake: (() => void) | null = null;
  const notify = (): void => {
    const resolve = wake;
    wake = null;
    resolve?.();
  };
  const unsubscribe = p.log.subscribe(p.sessionId, (envelope) => {
    queue.push(envelope);
    notify();
  });
  for (const signal of p.signals) signal.addEventListener('abort', notify);
  const stopped = (): boolean => p.signals.some((signal) => signal.aborted);
  const release = (): void => {
    unsubscribe();
    for (const signal of p.signals) signal.removeEventListener('abort', notify);
  };

  async function* generate(): AsyncGenerator<AgentEventEnvelope, void, undefined> {
    try {
      let last = p.cursor;
      /** 'skip' | 'yield' | 'end' for one candidate event. */
      const classify = (envelope: AgentEventEnvelope): 'skip' | 'yield' | 'yield-end' => {
        if (last !== undefined && envelope.id <= last) return 'skip';
        last = envelope.id;
        if (p.onlyRunId !== null && envelope.runId !== p.onlyRunId) return 'skip';
        return isTerminalEvent(envelope.event) && envelope.runId === p.targetRunId
          ? 'yield-end'
          : 'yield';
      };

      const replay = await p.log.readAfter(p.sessionId, p.cursor);
      if (stopped()) return;
      if (p.lastEventId !== undefined) {
        yield {
          id: p.lastEventId,
          sessionId: p.sessionId,
          runId: p.lastEventId.slice(0, p.lastEventId.lastIndexOf(':')),
          event: { type: 'reconnected', last_event_id: p.lastEventId, truncated: replay.truncated },
        };
      }
      if (p.prelude) {
        yield p.prelude;
        if (last === undefined || p.prelude.id > last) last = p.prelude.id;
      }
      for (const envelope of replay.events) {
        if (stopped()) return;
        const verdict = classify(envelope);
        if (verdict === 'skip') continue;
        yield envelope;
        if (verdict === 'yield-end') return;
      }
      for (;;) {
        if (stopped()) return;
        // Read before draining: if the run is no longer local, its terminal event (if any) was
        // appended before, hence is already queued.
        const local = p.targetRunId !== null && p.isLocal(p.targetRunId);
        while (queue.length > 0) {
          const envelope = queue.shift();
          if (!envelope) break;
          const verdict = classify(envelope);
          if (verdict === 'skip') continue;
          yield envelope;
          if (verdict === 'yield-end') return;
          if (stopped()) return;
        }
        if (p.targetRunId === null) return;
        if (!local && !(await p.isActive(p.targetRunId))) {
          if (queue.length > 0) continue;
          return;
        }
        if (queue.length > 0 || stopped()) continue;
        await new Promise<void>((resolve) => {
          wake = resolve;
          if (!local) setTimeout(notify, p.pollMs).unref();
        });
        if (!local && queue.length === 0 && !stopped()) {
          // A run executed on another node reaches this one through the log's fan-out; should
          // that drop an event, the stored log still has it.
          queue.push(...(await p.log.readAfter(p.sessionId, last)).events);
        }
      }
    } finally {
      release();
    }
  }

  return generate();
}
