import type { AgentEventEnvelope } from '@cognition/contracts';

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

export type EventListener = (envelope: AgentEventEnvelope) => void;

/**
 * Where run events go between the runtime and the streams that deliver them.
 *
 * Invariants every implementation keeps:
 * - within a session, events are appended in id order (the runtime guarantees one active run per
 *   session and sequential appends per run) and `readAfter` returns them in that order;
 * - a listener registered with `subscribe` receives every event appended after `subscribe`
 *   returned, exactly once and in order; subscribing first and reading after is gap-free;
 * - the log may forget old events (bounded buffers), but then says so through `truncated`.
 */
export interface EventLog {
  append(envelope: AgentEventEnvelope): Promise<void>;
  /** Events with an id greater than `after` (all held events when `after` is undefined). */
  readAfter(sessionId: string, after?: string): Promise<EventReplay>;
  /** Returns the function that removes the listener (idempotent). */
  subscribe(sessionId: string, listener: EventListener): () => void;
  /** Forgets the events of a deleted session. */
  dropSession(sessionId: string): Promise<void>;
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
  private readonly listeners = new Map<string, Set<EventListener>>();
  private readonly onListenerError: (error: unknown) => void;

  constructor(options: InMemoryEventLogOptions = {}) {
    this.bufferSize = options.bufferSize ?? 1000;
    this.maxSessions = options.maxSessions ?? 10_000;
    if (!Number.isInteger(this.bufferSize) || this.bufferSize < 1) {
      throw new RangeError(`bufferSize must be an integer >= 1, got ${this.bufferSize}`);
    }
    if (!Number.isInteger(this.maxSessions) || this.maxSessions < 1) {
      throw new RangeError(`maxSessions must be an integer >= 1, got ${this.maxSessions}`);
    }
    this.onListenerError = options.onListenerError ?? (() => undefined);
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
    for (const listener of this.listeners.get(envelope.sessionId) ?? []) {
      try {
        listener(envelope);
      } catch (error) {
        this.onListenerError(error);
      }
    }
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
    let set = this.listeners.get(sessionId);
    if (!set) {
      set = new Set();
      this.listeners.set(sessionId, set);
    }
    // Wrap so the same function subscribed twice is two independent subscriptions.
    const entry: EventListener = (envelope) => listener(envelope);
    set.add(entry);
    return () => {
      const current = this.listeners.get(sessionId);
      if (!current) return;
      current.delete(entry);
      if (current.size === 0) this.listeners.delete(sessionId);
    };
  }

  dropSession(sessionId: string): Promise<void> {
    this.rings.delete(sessionId);
    return Promise.resolve();
  }
}
