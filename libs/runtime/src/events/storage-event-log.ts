import type { AgentEventEnvelope, Usage } from '@cognition/contracts';
import { isTerminalEvent } from '@cognition/contracts';
import type { AppendRetention, CarriedRunUsage, EventStore, RunFence } from '@cognition/storage';
import { RunFencedError, StorageError } from '@cognition/storage';
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
  /** Events written per storage transaction at most; a full batch is written at once. Default 500. */
  maxBatch?: number;
  /**
   * Group commit: how long the oldest queued event waits for others before its batch is
   * written (ms; 0 writes at once). Terminal events never wait. Default
   * {@link DEFAULT_FLUSH_INTERVAL_MS}.
   */
  flushIntervalMs?: number;
  /**
   * Backpressure: events queued (waiting or being written) at most. An append beyond it is
   * refused: never stored, never published, its promise rejects. Default 20 000.
   */
  maxQueued?: number;
  /**
   * A failed write is retried (the store ignores ids it already holds, so a retry after an
   * unknown outcome stores nothing twice) until it succeeds or this long has passed since its
   * first attempt (ms); then its events are dropped and their appends reject. Default
   * {@link DEFAULT_RETRY_FOR_MS}: a database restart takes seconds.
   */
  retryForMs?: number;
  /** Receives errors thrown by listeners (which never fail an append). */
  onListenerError?: (error: unknown) => void;
}

export const DEFAULT_EVENT_RETENTION = 10_000;
/**
 * A few ms: at model speeds (tens to thousands of tokens/s per run, many runs per node) it turns
 * one commit per token into one per flush, and a person does not see 2 ms on a token.
 */
const DEFAULT_FLUSH_INTERVAL_MS = 2;
const DEFAULT_RETRY_FOR_MS = 30_000;
/** Backoff between write attempts: doubles from the first to the last. */
const RETRY_BACKOFF_MS = [25, 1_000] as const;
const READ_PAGE = 1000;

interface Pending {
  envelope: AgentEventEnvelope;
  resolve: () => void;
  reject: (error: unknown) => void;
  /** When it was appended (ms, `performance.now()`): the batch waits for its oldest. */
  at: number;
  /** The claim its run is executed under: stored only while the run is held under it. */
  fence?: RunFence;
  /** Refused (backpressure, or its run abandoned): rejected in its turn, never written nor published. */
  refused?: StorageError;
}

/** A run's usage waiting for a flush (`carryUsage`): the latest figures, every caller waiting. */
interface Carried {
  runId: string;
  usage: Usage;
  fence?: RunFence;
  /** When it was first queued: it waits no longer than an event would. */
  at: number;
  waiters: { resolve: () => void; reject: (error: unknown) => void }[];
  refused?: StorageError;
}

/**
 * An EventLog kept in the storage backend, so a client reconnecting after a restart replays
 * what it missed.
 *
 * **Group commit.** Events of every run on the node go into one queue; one `store.append` (one
 * statement or transaction) writes a batch when its oldest event has waited `flushIntervalMs`,
 * when it holds `maxBatch` events, or at once when it holds a terminal event; events appended
 * while a write is in flight join the next batch. Without the wait, a write that finishes
 * before the next token (SQLite writes in-process) made every token a commit of its own.
 *
 * **Write-then-publish** (chosen over publishing before the flush): subscribers receive an event
 * only once it is stored. The flush interval is then the latency cost, but the rule "every id a
 * client was sent stays resumable" holds by construction. Publishing first would let a client
 * hold an id a crash never stored; the resumed run numbers its events after the last *stored*
 * one, so it would reuse that id for another event, and the client reconnecting with it would
 * skip that event — a gap the `resumed` void marker cannot repair. Terminal events are stored
 * (and retention applied) before anyone receives them.
 *
 * **A failed write is retried, never published unstored.** While storage is down (a database
 * restart) the batch is retried with backoff and later events queue behind it, so live streams
 * pause and go on in order once it is back. A batch still failing after `retryForMs` is dropped
 * (its appends reject, nobody receives it). Publishing a failed batch anyway (as this log once
 * did) broke the rule above: the node dying next made another node resume the run with those
 * ids, and a client that had received them saw the resumed attempt's text appended to the first
 * one's, without the `resumed` marker that voids it.
 *
 * **The run's usage rides along** (`carryUsage`): queued like an event, written in the same
 * `store.append` as the batch it joins, so a model call's usage costs no write of its own.
 *
 * Live fan-out is in-process (a cluster adds a shared channel in its own implementation of the
 * port, fed by the batches this one publishes).
 */
export class StorageEventLog implements EventLog {
  private readonly store: EventStore;
  private readonly retain: number;
  private readonly maxBatch: number;
  private readonly flushIntervalMs: number;
  private readonly maxQueued: number;
  private readonly retryForMs: number;
  private readonly listeners: ListenerSet;
  private queue: Pending[] = [];
  /** Usage waiting for the next flush, by run (a later call replaces the figures). */
  private usage = new Map<string, Carried>();
  /** Events queued or in the write in flight (what backpressure bounds). */
  private held = 0;
  private terminalQueued = false;
  private writing = false;
  /** The batch being written (and retried), and its store call in flight. */
  private inFlight: {
    batch: Pending[];
    carried: Carried[];
    attempt: Promise<void> | null;
  } | null = null;
  private timer: NodeJS.Timeout | null = null;
  /**
   * Runs whose fence the store refused (another claim took them over), with the refusal: their
   * later appends are refused here without a write. Bounded (oldest forgotten first); a run
   * resumed here again is executed under a new claim, whose appends are not refused.
   */
  private readonly fencedOut = new Map<string, { fence: RunFence; error: RunFencedError }>();

  constructor(options: StorageEventLogOptions) {
    this.store = options.store;
    this.retain = options.retainPerSession ?? DEFAULT_EVENT_RETENTION;
    this.maxBatch = options.maxBatch ?? 500;
    this.flushIntervalMs = options.flushIntervalMs ?? DEFAULT_FLUSH_INTERVAL_MS;
    this.maxQueued = options.maxQueued ?? 20_000;
    this.retryForMs = options.retryForMs ?? DEFAULT_RETRY_FOR_MS;
    for (const [name, value, min] of [
      ['retainPerSession', this.retain, 1],
      ['maxBatch', this.maxBatch, 1],
      ['flushIntervalMs', this.flushIntervalMs, 0],
      ['maxQueued', this.maxQueued, 1],
      ['retryForMs', this.retryForMs, 0],
    ] as const) {
      if (!Number.isInteger(value) || value < min) {
        throw new RangeError(`${name} must be an integer >= ${min}, got ${value}`);
      }
    }
    this.listeners = new ListenerSet(options.onListenerError ?? (() => undefined));
  }

  /**
   * Resolves once the event is stored and published. Rejects, and the event is neither stored
   * nor published, when storage kept failing for `retryForMs` or more than `maxQueued` events
   * wait.
   */
  append(envelope: AgentEventEnvelope, fence?: RunFence): Promise<void> {
    return new Promise((resolve, reject) => {
      const pending: Pending = { envelope, resolve, reject, at: performance.now() };
      if (fence) {
        pending.fence = fence;
        const out = this.fencedOut.get(envelope.runId);
        if (out && sameFence(out.fence, fence)) pending.refused = out.error;
      }
      if (this.held >= this.maxQueued) {
        pending.refused = new StorageError(
          'STORAGE_ERROR',
          `Event log overloaded: ${this.held} events wait for storage (maxQueued ${this.maxQueued})`,
        );
      }
      this.queue.push(pending);
      this.held += 1;
      if (isTerminalEvent(envelope.event)) this.terminalQueued = true;
      this.schedule();
    });
  }

  carryUsage(runId: string, usage: Usage, fence?: RunFence): Promise<void> {
    return new Promise((resolve, reject) => {
      const out = this.fencedOut.get(runId);
      if (fence && out && sameFence(out.fence, fence)) {
        reject(out.error);
        return;
      }
      const queued = this.usage.get(runId);
      if (queued) {
        queued.usage = usage;
        queued.waiters.push({ resolve, reject });
      } else {
        const carried: Carried = { runId, usage, at: performance.now(), waiters: [] };
        if (fence) carried.fence = fence;
        carried.waiters.push({ resolve, reject });
        this.usage.set(runId, carried);
      }
      this.schedule();
    });
  }

  /** Starts a write now, or arms the timer for when the oldest event's (or usage's) wait ends. */
  private schedule(): void {
    let oldest = this.queue[0]?.at;
    for (const carried of this.usage.values()) oldest = Math.min(oldest ?? carried.at, carried.at);
    if (this.writing || oldest === undefined) return;
    const waited = performance.now() - oldest;
    if (
      this.terminalQueued ||
      this.queue.length >= this.maxBatch ||
      waited >= this.flushIntervalMs
    ) {
      if (this.timer) clearTimeout(this.timer);
      this.timer = null;
      void this.drain();
      return;
    }
    this.timer ??= setTimeout(
      () => {
        this.timer = null;
        this.schedule();
      },
      Math.max(1, Math.ceil(this.flushIntervalMs - waited)),
    );
  }

  private async drain(): Promise<void> {
    this.writing = true;
    try {
      const batch = this.queue.slice(0, this.maxBatch);
      this.queue = this.queue.slice(batch.length);
      this.terminalQueued = this.queue.some((p) => isTerminalEvent(p.envelope.event));
      const carried = [...this.usage.values()];
      this.usage = new Map();
      this.inFlight = { batch, carried, attempt: null };
      const failure = await this.write(batch, carried);
      this.inFlight = null;
      this.held -= batch.length;
      for (const pending of batch) {
        if (pending.refused === undefined && failure === null) {
          this.listeners.publish(pending.envelope);
        }
      }
      for (const pending of batch) {
        const error = pending.refused ?? failure?.error;
        if (error === undefined) pending.resolve();
        else pending.reject(error);
      }
      for (const entry of carried) {
        const error = entry.refused ?? failure?.error;
        for (const waiter of entry.waiters) {
          if (error === undefined) waiter.resolve();
          else waiter.reject(error);
        }
      }
    } finally {
      this.writing = false;
    }
    // What queued during the write waited as long as the write took: it goes when due.
    this.schedule();
  }

  /**
   * Writes the batch, retrying a transient failure for up to `retryForMs`; the last error when
   * it never succeeded.
   */
  private async write(batch: Pending[], carried: Carried[]): Promise<{ error: unknown } | null> {
    const start = performance.now();
    for (
      let backoff: number = RETRY_BACKOFF_MS[0];
      ;
      backoff = Math.min(backoff * 2, RETRY_BACKOFF_MS[1])
    ) {
      // Each attempt leaves out what was refused meanwhile (a run abandoned during the retries).
      const live = batch.filter((p) => !p.refused);
      const envelopes = live.map((p) => p.envelope);
      const usage = carried.filter((c) => !c.refused);
      if (envelopes.length === 0 && usage.length === 0) return null;
      try {
        // Retention goes in the write it follows (one round trip, atomic with it): a retry
        // appends nothing twice, then trims again.
        const attempt = this.store.append(
          envelopes,
          this.retentionOf(envelopes),
          fencesOf(live, usage),
          usage.map((c): CarriedRunUsage => ({ runId: c.runId, usage: c.usage })),
        );
        // Only waited on (by `abandon`), never read: settles either way.
        if (this.inFlight) {
          this.inFlight.attempt = attempt.then(
            () => undefined,
            () => undefined,
          );
        }
        const refused = await attempt;
        // The store skipped the events of runs another claim took over and stored the rest:
        // those are refused (never published), like every later append of those runs.
        for (const runId of refused) {
          const fence =
            live.find((p) => p.envelope.runId === runId)?.fence ??
            usage.find((c) => c.runId === runId)?.fence;
          if (fence) this.fenceOut(fence, batch, carried);
        }
        return null;
      } catch (error) {
        const left = this.retryForMs - (performance.now() - start);
        if (left <= 0 || !isTransient(error)) return { error };
        await new Promise((resolve) => setTimeout(resolve, Math.min(backoff, left)));
      }
    }
  }

  /** Refuses the queued and batched events (and usage) of a run whose fence the store refused. */
  private fenceOut(fence: RunFence, batch: Pending[], carried: Carried[]): void {
    const error = new RunFencedError([fence.runId]);
    this.fencedOut.delete(fence.runId);
    this.fencedOut.set(fence.runId, { fence, error });
    if (this.fencedOut.size > 10_000) {
      const oldest = this.fencedOut.keys().next().value;
      if (oldest !== undefined) this.fencedOut.delete(oldest);
    }
    for (const pending of [...batch, ...this.queue, ...carried, ...this.usage.values()]) {
      if (pending.fence && sameFence(pending.fence, fence)) pending.refused ??= error;
    }
  }

  async abandon(runIds: readonly string[], timeoutMs: number): Promise<boolean> {
    const runs = new Set(runIds);
    const error = new StorageError(
      'CONFLICT',
      'Run taken over by another node: its events are no longer written here',
    );
    for (const pending of [...(this.inFlight?.batch ?? []), ...this.queue]) {
      if (runs.has(pending.envelope.runId)) pending.refused ??= error;
    }
    for (const carried of [...(this.inFlight?.carried ?? []), ...this.usage.values()]) {
      if (runs.has(carried.runId)) carried.refused ??= error;
    }
    const attempt = this.inFlight?.attempt;
    const holds =
      this.inFlight?.batch.some((p) => runs.has(p.envelope.runId)) === true ||
      this.inFlight?.carried.some((c) => runs.has(c.runId)) === true;
    if (!attempt || !holds) return true;
    let timer: NodeJS.Timeout | undefined;
    const settled = await Promise.race([
      attempt.then(
        () => true,
        () => true,
      ),
      new Promise<boolean>((resolve) => {
        timer = setTimeout(() => resolve(false), timeoutMs);
      }),
    ]);
    clearTimeout(timer);
    return settled;
  }

  /** Retention for the sessions whose run ended in `batch` (a running run is never cut). */
  private retentionOf(batch: AgentEventEnvelope[]): AppendRetention | undefined {
    const ended = new Set(batch.filter((e) => isTerminalEvent(e.event)).map((e) => e.sessionId));
    return ended.size === 0 ? undefined : { sessionIds: [...ended], keep: this.retain };
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

function sameFence(a: RunFence, b: RunFence): boolean {
  return a.runId === b.runId && a.ownerNode === b.ownerNode && a.claim === b.claim;
}

/** One fence per run of the batch and its usage (the store checks each once). */
function fencesOf(batch: readonly Pending[], carried: readonly Carried[]): RunFence[] | undefined {
  const fences = new Map<string, RunFence>();
  for (const pending of batch) {
    if (pending.fence) fences.set(pending.envelope.runId, pending.fence);
  }
  for (const entry of carried) {
    if (entry.fence) fences.set(entry.runId, entry.fence);
  }
  return fences.size === 0 ? undefined : [...fences.values()];
}

/**
 * Worth retrying: the database unreachable or failing for a reason it does not name. A refusal
 * of the events themselves (invalid, too large) fails the same way every time.
 */
function isTransient(error: unknown): boolean {
  return !(error instanceof StorageError) || ['UNAVAILABLE', 'STORAGE_ERROR'].includes(error.code);
}
