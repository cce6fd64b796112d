import type { AgentEventEnvelope } from '@cognition/contracts';
import type {
  AppendRetention,
  CarriedRunUsage,
  EventStore,
  RunFence,
  StoredEventPage,
} from '@cognition/storage';
import { clone } from '../clone';

interface SessionEvents {
  /** Sorted by id. */
  events: AgentEventEnvelope[];
  evictedUpTo: string | null;
}

/** The memory backend's `EventStore`: per session, its events sorted by id. */
export class MemoryEventStore implements EventStore {
  private readonly sessions = new Map<string, SessionEvents>();

  constructor(
    private readonly sessionExists: (sessionId: string) => boolean,
    /** Whether a run is still held under the fence (the runs' claim numbers). */
    private readonly fenceHolds: (fence: RunFence) => boolean,
    /** `runs.update(runId, { usage })`, unless there is no such run (then nothing). */
    private readonly storeUsage: (carried: CarriedRunUsage) => void,
  ) {}

  async append(
    envelopes: readonly AgentEventEnvelope[],
    retention?: AppendRetention,
    fences?: readonly RunFence[],
    usage?: readonly CarriedRunUsage[],
  ): Promise<string[]> {
    // Checked before anything is written: the append is one atomic step (nothing runs between
    // the check and the writes in this process).
    const refused = (fences ?? []).filter((f) => !this.fenceHolds(f)).map((f) => f.runId);
    for (const envelope of envelopes) {
      if (!this.sessionExists(envelope.sessionId)) continue;
      if (refused.includes(envelope.runId)) continue;
      let held = this.sessions.get(envelope.sessionId);
      if (!held) {
        held = { events: [], evictedUpTo: null };
        this.sessions.set(envelope.sessionId, held);
      }
      const at = this.firstIndexAfter(held.events, envelope.id, true);
      if (held.events[at]?.id === envelope.id) continue;
      held.events.splice(at, 0, clone(envelope));
    }
    for (const carried of usage ?? []) {
      if (!refused.includes(carried.runId)) this.storeUsage(carried);
    }
    for (const sessionId of retention?.sessionIds ?? [])
      await this.trim(sessionId, retention?.keep ?? 0);
    return refused;
  }

  listAfter(sessionId: string, after: string | undefined, limit: number): Promise<StoredEventPage> {
    const held = this.sessions.get(sessionId);
    if (!held) return Promise.resolve({ events: [], evictedUpTo: null });
    const from = after === undefined ? 0 : this.firstIndexAfter(held.events, after, false);
    return Promise.resolve({
      events: clone(held.events.slice(from, from + limit)),
      evictedUpTo: held.evictedUpTo,
    });
  }

  trim(sessionId: string, keep: number): Promise<number> {
    const held = this.sessions.get(sessionId);
    const excess = held ? held.events.length - Math.max(0, keep) : 0;
    if (!held || excess <= 0) return Promise.resolve(0);
    const removed = held.events.splice(0, excess);
    held.evictedUpTo = removed[removed.length - 1]?.id ?? held.evictedUpTo;
    return Promise.resolve(removed.length);
  }

  /** Forgets a deleted session's events (called by the backend's session delete). */
  deleteSession(sessionId: string): void {
    this.sessions.delete(sessionId);
  }

  /** Index of the first event with id > `id` (or >= `id` when `inclusive`). */
  private firstIndexAfter(events: AgentEventEnvelope[], id: string, inclusive: boolean): number {
    let lo = 0;
    let hi = events.length;
    while (lo < hi) {
      const mid = (lo + hi) >> 1;
      const midId = events[mid]?.id ?? '';
      if (midId < id || (!inclusive && midId === id)) lo = mid + 1;
      else hi = mid;
    }
    return lo;
  }
}
