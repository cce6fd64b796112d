import type { AgentEventEnvelope, Usage } from '@cognition/contracts';
import type { RunFence } from '@cognition/storage';
import type { EventListener } from './listener-set';
import { ListenerSet } from './listener-set';

export type { EventListener } from './listener-set';

/** Events of one session after a cursor, as far as the log still holds them. */
export interface EventReplay {
  /** In id order, every event with `id > after` that the log holds. */
  events: AgentEventEnvelope[];
  /**
   * true when events after the cursor were already evicted, so `events` misses some of them
   * (the subscriber should reload state, e.g. messages, instead of trusting the replay alone).
   */
  truncated: boolean;
}

/**
 * Where run events go between the runtime and the streams that deliver them.
 *
 * Invariants every implementation keeps:
 * - within a session, events are appended in id order (the runtime guarantees one active run per
 *   session and appends each run's events in order) and `readAfter` returns them in that order;
 * - appends take effect in call order, even when a caller does not wait for the previous append
 *   to resolve (a run emits a token without waiting for the last one to be stored);
 * - a listener registered with `subscribe` receives every event appended after `subscribe`
 *   returned, exactly once and in order; subscribing first and reading after is gap-free;
 * - the log may forget old events (bounded buffers, retention), but then says so through
 *   `truncated`: it is true exactly when events after the cursor were evicted.
 * `@cognition/runtime/testing`'s `runEventLogConformance` checks them for any implementation.
 */
export interface EventLog {
  /**
   * With `fence` (the claim the run is executed under), a durable log stores the event only
   * while the run is held under it: otherwise the append rejects with `RunFencedError` and the
   * event is neither stored nor published. A log that stores nothing durable ignores it.
   */
  append(envelope: AgentEventEnvelope, fence?: RunFence): Promise<void>;
  /**
   * Only a log that stores events in the database has it: stores a running run's usage so far
   * (as `runs.update(runId, { usage }, fence)` would) in its next flush, in the same atomic
   * write as the events around it and fenced as they are, instead of a write of its own. Later
   * calls for a run replace what is still queued. Resolves once stored; rejects as `append`
   * does (`RunFencedError`, storage failing for longer than the retries). Without it the caller
   * writes the usage itself.
   */
  carryUsage?(runId: string, usage: Usage, fence?: RunFence): Promise<void>;
  /** Events with an id greater than `after` (all held events when `after` is undefined). */
  readAfter(sessionId: string, after?: string): Promise<EventReplay>;
  /** Returns the function that removes the listener (idempotent). */
  subscribe(sessionId: string, listener: EventListener): () => void;
  /** Forgets the events of a deleted session. */
  dropSession(sessionId: string): Promise<void>;
  /**
   * Stops writing the events of runs another node takes over (the hand-off at shutdown): those
   * not stored yet are dropped (their appends reject, nobody receives them).
   * Resolves true once no write holding one of them is in flight, false when one still is after
   * `timeoutMs`. The new owner numbers its events after the last stored one: a write of ours
   * landing later would reuse those ids for other events.
   */
  abandon(runIds: readonly string[], timeoutMs: number): Promise<boolean>;
}

export interface InMemoryEventLogOptions {
  /** Events kept per session (like `COGNITION_SSE_BUFFER_SIZE`). Default 1000. */
  bufferSize?: number;
  /** Sessions kept; the least recently written one is forgotten first. Default 10 000. */
  maxSessions?: number;
  /** Receives errors thrown by listeners (which never fail an append). */
  onListenerError?: (error: unknown) => void;
}

class Ring {
  private readonly items: (AgentEventEnvelope | undefined)[];
  private start = 0;
  private size = 0;
  /** Greatest id evicted so far: a cursor below it has lost events. */
  evictedUpTo: string | undefined;

  constructor(readonly capacity: number) {
    this.items = new Array<AgentEventEnvelope | undefined>(capacity);
  }

  push(envelope: AgentEventEnvelope): void {
    if (this.size === this.capacity) {
      this.evictedUpTo = this.items[this.start]?.id;
      this.items[this.start] = envelope;
      this.start = (this.start + 1) % this.capacity;
      return;
    }
    this.items[(this.start + this.size) % this.capacity] = envelope;
    this.size += 1;
  }

  after(cursor: string | undefined): AgentEventEnvelope[] {
    const out: AgentEventEnvelope[] = [];
    for (let i = 0; i < this.size; i += 1) {
      const item = this.items[(this.start + i) % this.capacity];
      if (item && (cursor === undefined || item.id > cursor)) out.push(item);
    }
    return out;
  }
}

/**
 * A process-local EventLog: one bounded ring buffer per session. Enough for a single server
 * node; several nodes need a shared implementation (e.g. Redis streams) of the same port.
 */
export class InMemoryEventLog implements EventLog {
  private readonly bufferSize: number;
  private readonly maxSessions: number;
  private readonly rings = new Map<string, Ring>();
  private readonly listeners: ListenerSet;

  constructor(options: InMemoryEventLogOptions = {}) {
    this.bufferSize = options.bufferSize ?? 1000;
    this.maxSessions = options.maxSessions ?? 10_000;
    if (!Number.isInteger(this.bufferSize) || this.bufferSize < 1) {
      throw new RangeError(`bufferSize must be an integer >= 1, got ${this.bufferSize}`);
    }
    if (!Number.isInteger(this.maxSessions) || this.maxSessions < 1) {
      throw new RangeError(`maxSessions must be an integer >= 1, got ${this.maxSessions}`);
    }
    this.listeners = new ListenerSet(options.onListenerError ?? (() => undefined));
  }

  append(envelope: AgentEventEnvelope): Promise<void> {
    let ring = this.rings.get(envelope.sessionId);
    if (ring) {
      // Re-insert so Map order is least-recently-written first.
      this.rings.delete(envelope.sessionId);
    } else {
      ring = new Ring(this.bufferSize);
    }
    this.rings.set(envelope.sessionId, ring);
    ring.push(envelope);
    if (this.rings.size > this.maxSessions) {
      const oldest = this.rings.keys().next().value;
      if (oldest !== undefined) this.rings.delete(oldest);
    }
    this.listeners.publish(envelope);
    return Promise.resolve();
  }

  readAfter(sessionId: string, after?: string): Promise<EventReplay> {
    const ring = this.rings.get(sessionId);
    if (!ring) return Promise.resolve({ events: [], truncated: false });
    const truncated =
      ring.evictedUpTo !== undefined && (after === undefined || after < ring.evictedUpTo);
    return Promise.resolve({ events: ring.after(after), truncated });
  }

  subscribe(sessionId: string, listener: EventListener): () => void {
    return this.listeners.add(sessionId, listener);
  }

  dropSession(sessionId: string): Promise<void> {
    this.rings.delete(sessionId);
    return Promise.resolve();
  }

  /** Appends take effect at once: nothing waits to be written. */
  abandon(): Promise<boolean> {
    return Promise.resolve(true);
  }
}
