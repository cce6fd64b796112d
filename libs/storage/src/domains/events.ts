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

/**
 * The durable run-event log of each session, for event streams that survive a restart. Event
 * ids (`<runId>:<seq>`) sort in emission order within a session and are unique in it.
 */
export interface EventStore {
  /**
   * Stores the envelopes (one atomic write). An id the session already holds is ignored (an
   * append retried after an unknown outcome stores nothing twice). Envelopes of a session that
   * does not exist (deleted while its run was still streaming) are dropped.
   */
  append(envelopes: readonly AgentEventEnvelope[]): Promise<void>;
  /** Events of the session with an id greater than `after` (all when undefined), in id order. */
  listAfter(sessionId: string, after: string | undefined, limit: number): Promise<StoredEventPage>;
  /**
   * Retention: deletes the session's oldest events so at most `keep` remain, and records the
   * greatest deleted id as `evictedUpTo`. Returns how many were deleted.
   */
  trim(sessionId: string, keep: number): Promise<number>;
}
