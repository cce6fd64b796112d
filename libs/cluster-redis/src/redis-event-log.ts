import type { AgentEventEnvelope } from '@cognition/contracts';
import type { EventListener, EventLog, EventReplay, Logger } from '@cognition/runtime';
import { ListenerSet } from '@cognition/runtime';
import type { Redis } from 'ioredis';

export interface RedisEventLogOptions {
  /** The durable log every node shares (the storage-backed one): appends and replays. */
  store: EventLog;
  /** For XADD: one entry per flush of the store, holding the flush's events. */
  redis: Redis;
  /** A separate connection for the blocking XREAD loop. */
  reader: Redis;
  nodeId: string;
  keyPrefix: string;
  /** Entries the stream keeps (approximate trim). Default 100,000. */
  maxLength?: number;
  logger: Logger;
}

/**
 * The event log of several nodes: events are stored in the shared durable log (PostgreSQL, the
 * system of record — replays read it) and fanned out live to every node through one Redis
 * Stream (`<prefix>events`), one entry per batch the store wrote. Each node reads the stream with a blocking XREAD from the last
 * entry it saw, so a node whose connection drops picks up where it left off (a Stream keeps
 * its entries, unlike pub/sub); entries of its own node are skipped (its listeners got them
 * from the store). Should Redis be down, appends still store (streams of other nodes then find
 * the events when they re-read the store on their poll) and the fan-out resumes by itself.
 */
export class RedisEventLog implements EventLog {
  private readonly remote: ListenerSet;
  private readonly key: string;
  private readonly maxLength: string;
  private outbox: AgentEventEnvelope[] = [];
  private running = false;
  private loop: Promise<void> | null = null;
  /** The store's: a run's usage rides in its flush (nothing of it is fanned out). */
  readonly carryUsage?: EventLog['carryUsage'];

  constructor(private readonly o: RedisEventLogOptions) {
    this.carryUsage = o.store.carryUsage?.bind(o.store);
    this.key = `${o.keyPrefix}events`;
    this.maxLength = String(o.maxLength ?? 100_000);
    this.remote = new ListenerSet((error) =>
      o.logger.warn({ err: error }, 'event listener failed'),
    );
  }

  append(envelope: AgentEventEnvelope, fence?: Parameters<EventLog['append']>[1]): Promise<void> {
    // A fenced-out event (another claim holds its run) is refused by the store: never published.
    const stored = this.o.store.append(envelope, fence);
    // Published once stored (and in append order: stores resolve in order, the outbox keeps
    // it, and one connection keeps the order of its commands), so no node hears of an event
    // a restart could lose; one the store dropped is published nowhere (the chaos run: a
    // dropped event published anyway let the node resuming the run reuse its id).
    void stored.then(
      () => this.publish(envelope),
      () => undefined,
    );
    return stored;
  }

  /**
   * Group fan-out: the store resolves a whole flush (one group commit) at once, so what is
   * stored in one turn of the event loop goes out as ONE XADD entry holding the batch, not one
   * command per token (issue 27: ≈ one XADD per token before). `setImmediate` lets every
   * append of the flush resolve first.
   */
  private publish(envelope: AgentEventEnvelope): void {
    this.outbox.push(envelope);
    if (this.outbox.length === 1) setImmediate(() => this.sendOutbox());
  }

  private sendOutbox(): void {
    const batch = this.outbox;
    this.outbox = [];
    if (batch.length === 0) return;
    this.o.redis
      .xadd(
        this.key,
        'MAXLEN',
        '~',
        this.maxLength,
        '*',
        'n',
        this.o.nodeId,
        'b',
        JSON.stringify(batch),
      )
      .catch((error: unknown) =>
        this.o.logger.debug(
          { err: error, firstEventId: batch[0]?.id, events: batch.length },
          'event fan-out failed',
        ),
      );
  }

  readAfter(sessionId: string, after?: string): Promise<EventReplay> {
    return this.o.store.readAfter(sessionId, after);
  }

  subscribe(sessionId: string, listener: EventListener): () => void {
    const local = this.o.store.subscribe(sessionId, listener);
    const remote = this.remote.add(sessionId, listener);
    return () => {
      local();
      remote();
    };
  }

  dropSession(sessionId: string): Promise<void> {
    return this.o.store.dropSession(sessionId);
  }

  abandon(runIds: readonly string[], timeoutMs: number): Promise<boolean> {
    return this.o.store.abandon(runIds, timeoutMs);
  }

  /** Starts following the stream from its current end. */
  start(): void {
    if (this.running) return;
    this.running = true;
    this.loop = this.follow();
  }

  async stop(): Promise<void> {
    this.running = false;
    this.o.reader.disconnect();
    await this.loop;
  }

  private async follow(): Promise<void> {
    let last = '$';
    while (this.running) {
      try {
        const result = await this.o.reader.xread(
          'COUNT',
          1000,
          'BLOCK',
          1000,
          'STREAMS',
          this.key,
          last,
        );
        for (const [, entries] of result ?? []) {
          for (const [id, fields] of entries) {
            last = id;
            this.deliver(fields);
          }
        }
      } catch (error) {
        if (!this.running) return;
        this.o.logger.debug({ err: error }, 'event stream read failed; retrying');
        // Entries added meanwhile are still in the stream after `last` (and in the store).
        await new Promise((resolve) => setTimeout(resolve, 500));
      }
    }
  }

  /** An entry holds a batch (`b`, a JSON array) or, from nodes before issue 27, one event (`e`). */
  private deliver(fields: string[]): void {
    const node = fields[fields.indexOf('n') + 1];
    if (node === this.o.nodeId) return;
    const batch = fields.indexOf('b');
    const single = fields.indexOf('e');
    try {
      if (batch >= 0 && fields[batch + 1] !== undefined) {
        const envelopes = JSON.parse(fields[batch + 1] as string) as AgentEventEnvelope[];
        for (const envelope of envelopes) this.remote.publish(envelope);
      } else if (single >= 0 && fields[single + 1] !== undefined) {
        this.remote.publish(JSON.parse(fields[single + 1] as string) as AgentEventEnvelope);
      }
    } catch (error) {
      this.o.logger.warn({ err: error }, 'unreadable event on the fan-out stream');
    }
  }
}
