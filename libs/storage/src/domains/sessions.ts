import type {
  CreateSessionInput,
  ListSessionsQuery,
  Session,
  SessionPage,
  UpdateSessionInput,
} from '@cognition/contracts';
import type { Scope } from '../scope';

export interface SessionStore {
  /** Creates an `active` session with version 1, recording `scope` as the session's scopes. */
  create(input: CreateSessionInput, scope: Scope): Promise<Session>;
  /** null when missing or outside the caller's scope. */
  get(id: string, scope: Scope): Promise<Session | null>;
  /**
   * Filtered by scope and the query's filters (metadata predicates, status, agent, title text: all
   * must match), in the query's order (default newest `updatedAt` first); see ListSessionsQuery.
   */
  list(query: ListSessionsQuery, scope: Scope): Promise<SessionPage>;
  /**
   * Applies the given fields (metadata and config replaced whole) and increments `version`.
   * Throws SESSION_NOT_FOUND (missing or outside scope), VERSION_CONFLICT when `expectedVersion`
   * differs from the stored version, VALIDATION_ERROR for bad input.
   */
  update(id: string, input: UpdateSessionInput, scope: Scope): Promise<Session>;
  /** Atomically adds `delta` to messageCount; returns the new count. */
  updateMessageCount(id: string, delta: number): Promise<number>;
  /**
   * Deletes the session and everything that hangs off it: messages, runs, events, the
   * checkpoints of its thread and its thread-scoped store items. false when missing or outside scope.
   */
  delete(id: string, scope: Scope): Promise<boolean>;
  /**
   * The TTL sweep step: deletes (as `delete` does) at most `limit` sessions that are expired at
   * the policy's `now()` and returns their ids. Safe with several processes sweeping one
   * database: each expired session is deleted by exactly one of them, the others skip it.
   */
  sweepExpired(limit: number): Promise<string[]>;
}

/**
 * Read-time rules of sessions (see `StorageBackend.setSessionPolicy`):
 * - `abandonAfterSeconds` (0: off): an `active` session with `lastActivityAt` at or before
 *   `now − abandonAfterSeconds` reads as `abandoned` (`readStatusOf` of the contracts), and the
 *   list filter `status: 'abandoned'` selects exactly those in the database (`status: 'active'`
 *   then excludes them);
 * - `ttlSeconds` (0: never): a session is expired when its `expiresAt` is at or before `now`,
 *   or, without `expiresAt`, when its `lastActivityAt` is at or before `now − ttlSeconds`.
 *   Expired sessions are never returned by any read (get, list, messages, activity) and are
 *   refused by writes as missing, before `sweepExpired` deletes them;
 * - `now`: the clock of these rules (injectable for tests); timestamps written keep real time.
 */
export interface SessionPolicy {
  abandonAfterSeconds: number;
  ttlSeconds: number;
  now: () => Date;
}

/** The policy of a backend nobody configured: abandon after 1800 s, no TTL, the real clock. */
export const DEFAULT_SESSION_POLICY: SessionPolicy = {
  abandonAfterSeconds: 1800,
  ttlSeconds: 0,
  now: () => new Date(),
};

/** Whether `session` is expired under `policy` (the rule every backend applies in its reads). */
export function isSessionExpired(
  session: { expiresAt: Date | null; lastActivityAt: Date },
  policy: SessionPolicy,
): boolean {
  const now = policy.now().getTime();
  if (session.expiresAt !== null) return session.expiresAt.getTime() <= now;
  return (
    policy.ttlSeconds > 0 && session.lastActivityAt.getTime() <= now - policy.ttlSeconds * 1000
  );
}
