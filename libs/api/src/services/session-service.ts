import type {
  CreateSessionInput,
  Session,
  SessionActivity,
  SessionActivityPage,
  SessionActivityQuery,
  ThreadHistoryPage,
  UpdateSessionInput,
} from '@cognition/contracts';
import type { Scope } from '@cognition/storage';

/*
 * The slice of the runtime's session model the API calls, declared here (like RunService) so the
 * router's type never references LangGraph types. The runtime's `SessionService` satisfies it.
 */

export interface Versioned {
  /** The write happens only if the stored version still equals it (409 otherwise). */
  expectedVersion?: number | undefined;
}

/** A point of a session's thread: exactly one of a checkpoint id and a message id. */
export interface ThreadPointInput {
  checkpointId?: string | undefined;
  messageId?: string | undefined;
}

/**
 * Every write to a session goes through one execute pipeline (load → hooks → action → hooks →
 * save with the version check → hooks), emitting `session.*` events that land in the session's
 * activity log. Errors carry codes: SESSION_NOT_FOUND / NOT_FOUND / MESSAGE_NOT_FOUND (404),
 * VERSION_CONFLICT, CONFLICT (wrong state), RUN_IN_PROGRESS (409), VALIDATION_ERROR (422).
 */
export interface SessionLifecycle {
  create(input: CreateSessionInput, scope: Scope): Promise<Session>;
  update(id: string, changes: Omit<UpdateSessionInput, 'endedAt'>, scope: Scope): Promise<Session>;
  suspend(id: string, options: Versioned, scope: Scope): Promise<Session>;
  resume(id: string, options: Versioned, scope: Scope): Promise<Session>;
  complete(id: string, options: Versioned, scope: Scope): Promise<Session>;
  fail(
    id: string,
    options: Versioned & { reason?: string | undefined },
    scope: Scope,
  ): Promise<Session>;
  clear(id: string, options: Versioned, scope: Scope): Promise<Session>;
  /** `history`: the fork's thread gets every checkpoint of the source's (no point then). */
  fork(
    id: string,
    options: ThreadPointInput & {
      title?: string | null | undefined;
      history?: boolean | undefined;
    },
    scope: Scope,
  ): Promise<Session>;
  /** `branch`: the new head's parent is the point (a branch of the history), not the old head. */
  rewind(
    id: string,
    options: ThreadPointInput & Versioned & { branch?: boolean | undefined },
    scope: Scope,
  ): Promise<Session>;
  setMetadata(
    id: string,
    key: string,
    value: string,
    options: Versioned,
    scope: Scope,
  ): Promise<Session>;
  deleteMetadata(id: string, key: string, options: Versioned, scope: Scope): Promise<Session>;
  history(
    id: string,
    page: { limit: number; offset: number },
    scope: Scope,
  ): Promise<ThreadHistoryPage>;
  activity(id: string, query: SessionActivityQuery, scope: Scope): Promise<SessionActivityPage>;
  rebuildMessages(id: string, scope: Scope): Promise<{ messages: number }>;
  watch(
    scope: Scope,
    options: { sessionId?: string | undefined; afterId?: number | undefined; signal?: AbortSignal },
  ): AsyncGenerator<SessionActivity, void, undefined>;
}
