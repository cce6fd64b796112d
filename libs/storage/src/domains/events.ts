import type { AgentEventEnvelope, Usage } from '@cognition/contracts';
import type { RunFence } from './runs';

/** A page of a session's stored events (see `EventStore.listAfter`). */
export interface StoredEventPage {
  /** In id order, ids greater than the cursor, at most `limit`. */
  events: AgentEventEnvelope[];
  /**
   * The greatest id retention ever deleted from the session (null: none): a cursor below it
   * has lost events.
   */
  evictedUpTo: string | null;
}

/** Retention an append applies in its own write (see `EventStore.append`). */
export interface AppendRetention {
  /** The sessions to trim (those whose run just stored its terminal event). */
  sessionIds: readonly string[];
  /** Events kept per session, as `trim`'s `keep`. */
  keep: number;
}

/**
 * A running run's usage so far, written by an append as `runs.update(runId, { usage }, fence)`
 * would write it (the run row and its session's usage records), in the append's atomic write
 * (see `EventStore.append`).
 */
export interface CarriedRunUsage {
  runId: string;
  usage: Usage;
}

/**
 * The durable run-event log of each session, for event streams that survive a restart. Event
 * ids (`<runId>:<seq>`) sort in emission order within a session and are unique in it.
 */
export interface EventStore {
  /**
   * Stores the envelopes (one atomic write). An id the session already holds is ignored (an
   * append retried after an unknown outcome stores nothing twice). Envelopes of a session that
   * does not exist (deleted while its run was still streaming) are dropped. With `retention`,
   * each of its sessions is then trimmed as `trim(sessionId, keep)` would, in the same atomic
   * write: the event log's flush of a terminal event and its retention are one round trip
   * where a database would need two.
   *
   * With `fences` (at most one per run), the envelopes of a fenced run are stored only while
   * the run is held under its fence, checked in the same atomic write (on PostgreSQL the run
   * row is share-locked by the statement, so a claim waits for it or it sees the claim); the
   * envelopes of runs whose fence no longer holds are skipped, the others stored. Answers the
   * ids of the runs refused (empty when none).
   *
   * With `usage` (at most one per run), each run's usage is stored as `runs.update(runId,
   * { usage }, its fence)` stores it, in the same atomic write as the events (the event log's
   * flush carries the run's bookkeeping instead of a write of its own); a run that is refused
   * (its fence) or gone gets no usage written. A backend may store a carried usage in a write
   * of its own right after the append (PostgreSQL when the run row changed since this process
   * last wrote it), never before it.
   */
  append(
    envelopes: readonly AgentEventEnvelope[],
    retention?: AppendRetention,
    fences?: readonly RunFence[],
    usage?: readonly CarriedRunUsage[],
  ): Promise<string[]>;
  /** Events of the session with an id greater than `after` (all when undefined), in id order. */
  listAfter(sessionId: string, after: string | undefined, limit: number): Promise<StoredEventPage>;
  /**
   * Retention: deletes the session's oldest events so at most `keep` remain, and records the
   * greatest deleted id as `evictedUpTo`. Returns how many were deleted.
   */
  trim(sessionId: string, keep: number): Promise<number>;
}
