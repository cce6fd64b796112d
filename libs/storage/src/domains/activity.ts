import type {
  NewSessionActivity,
  SessionActivity,
  SessionActivityPage,
  SessionActivityQuery,
} from '@cognition/contracts';
import type { Scope } from '../scope';

/**
 * The persisted, scoped session activity log (what the session pipeline's events leave behind).
 * Entries go with their session when it is deleted.
 */
export interface SessionActivityStore {
  /**
   * Appends one entry; returns it with its id (ids increase in append order, across sessions).
   * null (nothing stored) when the session does not exist.
   */
  append(entry: NewSessionActivity): Promise<SessionActivity | null>;
  /**
   * Appends several entries of one session in one write, in order; returns them with their ids
   * ([] and nothing stored when the session does not exist).
   */
  appendMany(entries: readonly NewSessionActivity[]): Promise<SessionActivity[]>;
  /** Newest first; SESSION_NOT_FOUND when the session is missing or outside the scope. */
  page(sessionId: string, query: SessionActivityQuery, scope: Scope): Promise<SessionActivityPage>;
  /**
   * Entries with an id greater than `afterId`, oldest first, at most `limit`, of the sessions
   * visible to `scope` (only `sessionId`'s when given): the replay of a watch stream.
   */
  listAfter(
    afterId: number,
    limit: number,
    scope: Scope,
    sessionId?: string,
  ): Promise<SessionActivity[]>;
}
