import type { AgentEventEnvelope } from '@cognition/contracts';
import { isTerminalEvent } from '@cognition/contracts';
import type { EventStore } from '@cognition/storage';
import type { EventListener, EventLog, EventReplay } from './event-log';
import { ListenerSet } from './listener-set';

export interface StorageEventLogOptions {
  /** Where events are kept: `storage.events` of the server's backend. */
  store: EventStore;
  /**
   * Retention: events kept per session, applied when a run's terminal event is stored (so a
   * running run is never cut). Default {@link DEFAULT_EVENT_RETENTION}.
   */
  retainPerSession?: number;
  /** Events written per storage transaction at most. Default 500. */
  maxBatch?: number;
  /** Receives errors thrown by listeners (which never fail an append). */
  onListenerError?: (error: unknown) => void;
}

export const DEFAULT_EVENT_RETENTION = 10_000;
const READ_PAGE = 1000;

interface Pending {
  envelope: AgentEventEnvelope;
  resolve: () => void;
  reject: (error: unknown) => void;
}

/**
 * An EventLog kept in the storage backend, so a client reconnecting after a restart replays
 * what it missed. Write-then-publish with group commit: appends made while a write is in flight
 * go together in the next transaction, and subscribers receive an event only once it is stored,
 * so no client ever holds an id a restart could lose. Live fan-out is in-process (a cluster
 * adds a shared channel in its own implementation of the port).
 */
export class StorageEventLog implements EventLog {
  private readonly store: EventStore;
  private readonly retain: number;
  private readonly maxBatch: number;
  private readonly listeners: ListenerSet;
  private queue: Pending[] = [];
  private writing = false;

  constructor(options: StorageEventLogOptions) {
    this.store = options.store;
    this.retain = options.retainPerSession ?? DEFAULT_EVENT_RETENTION;
    this.maxBatch = options.maxBatch ?? 500;
    if (!Number.isInteger(this.retain) || this.retain < 1) {
      throw new RangeError(`retainPerSession must be an integer >= 1, got ${this.retain}`);
    }
    if (!Number.isInteger(this.maxBatch) || this.maxBatch < 1) {
      throw new RangeError(`maxBatch must be an integer >= 1, got ${this.maxBatch}`);
    }
    this.listeners = new ListenerSet(options.onListenerError ?? (() => undefined));
  }

  /**
   * Resolves once the event is stored and published. On a storage failure it is still
   * published (live streams go on) and the promise rejects; a replay will miss it.
   */
  append(envelope: AgentEventEnvelope): Promise<void> {
    return new Promise((resolve, reject) => {
      this.queue.push({ envelope, resolve, reject });
      if (!this.writing) void this.drain();
    });
  }

  private async drain(): Promise<void> {
    this.writing = true;
    try {
      while (this.queue.length > 0) {
        const batch = this.queue.slice(0, this.maxBatch);
        this.queue = this.queue.slice(batch.length);
        let failure: { error: unknown } | null = null;
        try {
          await this.store.append(batch.map((p) => p.envelope));
          await this.applyRetention(batch);
        } catch (error) {
          failure = { error };
        }
        for (const pending of batch) this.listeners.publish(pending.envelope);
        for (const pending of batch) {
          if (failure) pending.reject(failure.error);
          else pending.resolve();
        }
      }
    } finally {
      this.writing = false;
    }
  }

  private async applyRetention(batch: Pending[]): Promise<void> {
    const ended = new Set(
      batch.filter((p) => isTerminalEvent(p.envelope.event)).map((p) => p.envelope.sessionId),
    );
    for (const sessionId of ended) await this.store.trim(sessionId, this.retain);
  }

  async readAfter(sessionId: string, after?: string): Promise<EventReplay> {
    const events: AgentEventEnvelope[] = [];
    let cursor = after;
    let evictedUpTo: string | null = null;
    for (;;) {
      const page = await this.store.listAfter(sessionId, cursor, READ_PAGE);
      evictedUpTo = page.evictedUpTo;
      events.push(...page.events);
      cursor = page.events[page.events.length - 1]?.id ?? cursor;
      if (page.events.length < READ_PAGE) break;
    }
    const truncated = evictedUpTo !== null && (after === undefined || after < evictedUpTo);
    return { events, truncated };
  }

  subscribe(sessionId: string, listener: EventListener): () => void {
    return this.listeners.add(sessionId, listener);
  }

  /** The session's rows went with it (storage cascades the delete): nothing left to drop. */
  dropSession(): Promise<void> {
    return Promise.resolve();
  }
}
