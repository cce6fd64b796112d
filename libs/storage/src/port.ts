import type {
  CallbackAttempt,
  CreateMessageInput,
  CreateRunInput,
  CreateSessionInput,
  ListSessionsQuery,
  Message,
  MessagePage,
  MessagePageQuery,
  Run,
  Session,
  SessionPage,
  StringMap,
  UpdateRunInput,
  UpdateSessionInput,
} from '@cognition/contracts';
import type { BaseCheckpointSaver, BaseStore } from '@langchain/langgraph-checkpoint';

/**
 * The caller's scope: scope key -> value (e.g. `{ user: 'alice', project: 'p1' }`).
 * A session is visible to a caller only when, for every key of the caller's scope, the session's
 * scope has the same value. The empty scope (scoping disabled) sees every session.
 * Every method that addresses a session by id takes the caller's scope and treats a session
 * outside it exactly like a missing one (existence is never revealed).
 */
export type Scope = StringMap;

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
   * Deletes the session and everything that hangs off it: messages, runs, the checkpoints of its
   * thread and its thread-scoped store items. false when missing or outside scope.
   */
  delete(id: string, scope: Scope): Promise<boolean>;
}

export interface MessageStore {
  /**
   * Inserts a message and increments the session's messageCount in one atomic step.
   * Throws SESSION_NOT_FOUND when the session does not exist.
   */
  create(input: CreateMessageInput): Promise<Message>;
  /** null when missing, belonging to another session, or the session is outside scope. */
  get(sessionId: string, messageId: string, scope: Scope): Promise<Message | null>;
  /** Thread order (oldest first), stable across calls; SESSION_NOT_FOUND outside scope. */
  page(sessionId: string, query: MessagePageQuery, scope: Scope): Promise<MessagePage>;
  /** Every message of the session in thread order. */
  listAll(sessionId: string, scope: Scope): Promise<Message[]>;
  /** Deletes every message of the session and resets its messageCount; returns how many. */
  deleteBySession(sessionId: string): Promise<number>;
}

export interface RunStore {
  /**
   * Creates a run. At most one active (`queued` | `running`) run per session, enforced
   * atomically by the database (not by a read-then-write), so two processes sharing one
   * database can never both succeed: the loser gets RUN_IN_PROGRESS.
   * A create with an idempotency key already used on the session returns the existing run.
   */
  create(input: CreateRunInput): Promise<{ run: Run; created: boolean }>;
  /** Throws RUN_NOT_FOUND. */
  update(id: string, input: UpdateRunInput): Promise<Run>;
  get(id: string): Promise<Run | null>;
  /** Runs of a session, newest first. */
  list(sessionId: string): Promise<Run[]>;
  getActive(sessionId: string): Promise<Run | null>;
  /** Every active run across sessions (startup recovery marks them `interrupted`). */
  listActive(): Promise<Run[]>;
  /**
   * Records one completion-callback delivery attempt on its run. Attempts go with their run
   * (and so with its session) when it is deleted.
   * Throws RUN_NOT_FOUND when the run does not exist, CONFLICT when the run already has this
   * (deliveryId, attempt) pair, VALIDATION_ERROR naming the field for bad input.
   */
  recordCallbackAttempt(input: CallbackAttempt): Promise<CallbackAttempt>;
  /**
   * The run's recorded callback attempts, oldest first (`startedAt`, then `attempt`). Empty for
   * a run without a callback and for an unknown run (like `list` for an unknown session).
   */
  listCallbackAttempts(runId: string): Promise<CallbackAttempt[]>;
}

export interface StorageHealth {
  backend: StorageBackendKind;
  ok: boolean;
  latencyMs: number;
  pool?: { size: number; idle: number; waiting: number };
  error?: string;
}

export type StorageBackendKind = 'memory' | 'sqlite' | 'postgres';

/**
 * One database behind one contract. Invariants every backend keeps (proved by the conformance
 * suite in `@cognition/storage/testing`):
 * - the LangGraph checkpoint of a session's thread is the authoritative history; message rows are
 *   its read projection, written in the same transaction as the checkpoint, and
 *   `rebuildMessageProjection` can always restore them from it;
 * - `initialize()` repairs any projection that drifted (e.g. a crash between writes).
 */
export interface StorageBackend {
  readonly kind: StorageBackendKind;
  readonly sessions: SessionStore;
  readonly messages: MessageStore;
  readonly runs: RunStore;
  /** LangGraph checkpointer on the same database; thread ids are `Session.threadId`. */
  readonly checkpointer: BaseCheckpointSaver;
  /** Cross-thread memory. Wrap with `scopedStore()` to keep tenants apart. */
  readonly store: BaseStore;
  /** Applies migrations, opens pools, repairs drifted projections. Idempotent. */
  initialize(): Promise<void>;
  /** Drains and closes connections. */
  close(): Promise<void>;
  healthCheck(): Promise<StorageHealth>;
  /**
   * Rewrites the session's message rows from the latest checkpoint of its thread (user messages
   * accepted but not yet checkpointed are kept) and recomputes messageCount.
   */
  rebuildMessageProjection(sessionId: string): Promise<{ messages: number }>;
}

export type StorageConfig =
  | { backend: 'memory' }
  | { backend: 'sqlite'; path: string }
  | { backend: 'postgres'; url: string; poolSize?: number };
