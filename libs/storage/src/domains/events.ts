import type { AgentEventEnvelope } from '@cognition/contracts';

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
   */
  append(envelopes: readonly AgentEventEnvelope[], retention?: AppendRetention): Promise<void>;
  /** Events of the session with an id greater than `after` (all when undefined), in id order. */
  listAfter(sessionId: string, after: string | undefined, limit: number): Promise<StoredEventPage>;
  /**
   * Retention: deletes the session's oldest events so at most `keep` remain, and records the
   * greatest deleted id as `evictedUpTo`. Returns how many were deleted.
   */
  trim(sessionId: string, keep: number): Promise<number>;
}
