import type {
  AgentEventEnvelope,
  CallbackAttempt,
  CreateMessageInput,
  CreateRunInput,
  CreateSessionInput,
  ListSessionsQuery,
  Message,
  MessagePage,
  PendingRunInput,
  MessagePageQuery,
  NewSessionActivity,
  Run,
  RunError,
  SessionActivity,
  SessionActivityPage,
  SessionActivityQuery,
  Session,
  SessionPage,
  StringMap,
  UpdateRunInput,
  UpdateSessionInput,
} from '@cognition/contracts';
import type { BaseCheckpointSaver, BaseStore } from '@langchain/langgraph-checkpoint';
import type { FeedbackStore, SearchStore, UsageStore } from './analytics';
import type { ArtifactStore } from './artifacts';
import type { RegistryStore } from './registry';

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

/** One root checkpoint of a thread, as retention sees it. */
export interface StoredCheckpointRef {
  checkpointId: string;
  /** When it was written. */
  createdAt: Date;
}

/** What a thread's checkpoints occupy: counts and the bytes of their serialized payloads. */
export interface CheckpointFootprint {
  checkpoints: number;
  writes: number;
  bytes: number;
}

/**
 * The storage side of checkpoint retention (root namespace only). Pruning never touches message
 * rows, the thread's other namespaces, or its head (the newest checkpoint).
 */
export interface CheckpointRetentionStore {
  /** The thread's root checkpoints, newest first (greatest id first). */
  list(threadId: string): Promise<StoredCheckpointRef[]>;
  /**
   * Deletes these root checkpoints of the thread with their pending writes, in one transaction,
   * except the thread's head at that moment (re-read inside the transaction). Ids already gone
   * are skipped, so several processes may prune one thread at once. Returns how many were deleted.
   */
  delete(threadId: string, checkpointIds: readonly string[]): Promise<number>;
  /** What the thread's checkpoints and writes (every namespace) occupy. */
  footprint(threadId: string): Promise<CheckpointFootprint>;
}

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

export interface MessageStore {
  /**
   * Inserts a message and increments the session's messageCount in one atomic step.
   * Throws SESSION_NOT_FOUND when the session does not exist.
   */
  create(input: CreateMessageInput): Promise<Message>;
  /** null when missing, belonging to another session, or the session is outside scope. */
  get(sessionId: string, messageId: string, scope: Scope): Promise<Message | null>;
  /**
   * Thread order (oldest first) or, with `order: 'desc'`, newest first; offsets count in the
   * chosen order and pages are stable across calls. SESSION_NOT_FOUND outside scope.
   */
  page(sessionId: string, query: MessagePageQuery, scope: Scope): Promise<MessagePage>;
  /** Every message of the session in thread order. */
  listAll(sessionId: string, scope: Scope): Promise<Message[]>;
  /** Deletes every message of the session and resets its messageCount; returns how many. */
  deleteBySession(sessionId: string): Promise<number>;
}

/**
 * A completion-callback delivery not yet finished (delivered, or given up): what the next
 * process needs to go on with it after a restart.
 */
export interface PendingCallback {
  /** One per delivery; the `X-Cognition-Delivery` header. */
  deliveryId: string;
  runId: string;
  url: string;
  /** The exact JSON body (the signature is computed over these bytes). */
  body: string;
  /** Attempts claimed so far (0 before the first). */
  attempts: number;
  /** When the next attempt is due. */
  nextAttemptAt: Date;
}

/** How `RunStore.settlePaused` ends a pause: resumed (`queued`) or `aborted`. */
export type SettlePausedChange =
  | { status: 'queued'; ownerNode?: string | null; leaseExpiresAt?: Date | null }
  | { status: 'aborted'; error: RunError; finishedAt: Date };

export interface RunStore {
  /**
   * Creates a run. At most one active (`queued` | `running`) run per session, enforced
   * atomically by the database (not by a read-then-write), so two processes sharing one
   * database can never both succeed: the loser gets RUN_IN_PROGRESS.
   * A create with an idempotency key already used on the session returns the existing run.
   * A `pending` run (with its `pendingInput`) is not active and never conflicts.
   */
  create(input: CreateRunInput): Promise<{ run: Run; created: boolean }>;
  /**
   * Starts a pending run: it becomes `queued` (active, so the one-active-run rule applies
   * atomically: RUN_IN_PROGRESS when another run of the session is active) with its pending
   * input's `messageId` as `inputMessageId`. RUN_NOT_FOUND; CONFLICT when it is not pending.
   */
  promote(id: string): Promise<Run>;
  /**
   * Claims an active run for `node` until `until`: true when it was unowned, already `node`'s,
   * or its owner's lease expired before `now` — a conditional update, so of several nodes
   * claiming at once exactly one wins. false for a run that is not active or missing.
   */
  claim(id: string, node: string, now: Date, until: Date): Promise<boolean>;
  /** Extends `node`'s lease of an active run to `until`; false when `node` no longer owns it. */
  renewLease(id: string, node: string, until: Date): Promise<boolean>;
  /**
   * Ends a run's pause for a person's decision (status `requires_action`), atomically: of
   * several callers (two resumes, a resume and an abort, on any node) exactly one gets the
   * updated run; the others get null, as does a run that is not paused. `queued` resumes it
   * (it keeps its session, claimed by `ownerNode` until `leaseExpiresAt` when given); `aborted`
   * ends it (`error`, `finishedAt`). Either way its `pendingAction` is cleared.
   * RUN_NOT_FOUND when missing.
   */
  settlePaused(id: string, change: SettlePausedChange): Promise<Run | null>;
  /** Pending runs, oldest first: of one session, or of every session when omitted. */
  listPending(sessionId?: string): Promise<Run[]>;
  /** The message a run was created `pending` with (kept after it started); null otherwise. */
  pendingInput(id: string): Promise<PendingRunInput | null>;
  /** Throws RUN_NOT_FOUND. */
  update(id: string, input: UpdateRunInput): Promise<Run>;
  get(id: string): Promise<Run | null>;
  /** Runs of a session, newest first. */
  list(sessionId: string): Promise<Run[]>;
  /**
   * The run holding the session (see `holdsSession`): its active run, or the run paused for a
   * decision. At most one.
   */
  getActive(sessionId: string): Promise<Run | null>;
  /**
   * Every active (`queued` | `running`) run across sessions, for recovery; paused runs are not
   * listed (no process executes them, none needs to).
   */
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
  /**
   * Stores a pending delivery (goes with its run when the run is deleted). Throws RUN_NOT_FOUND,
   * CONFLICT when the delivery id exists.
   */
  savePendingCallback(input: PendingCallback): Promise<void>;
  /**
   * Claims attempt `attempt` of a pending delivery: true for exactly one caller, when the stored
   * `attempts` is `attempt - 1` (it becomes `attempt`), false otherwise (another process claimed
   * it, or the delivery is finished). So each attempt is made at most once across processes.
   */
  claimCallbackAttempt(deliveryId: string, attempt: number): Promise<boolean>;
  /** Sets when the next attempt is due, or with null removes the delivery (finished). */
  settlePendingCallback(deliveryId: string, nextAttemptAt: Date | null): Promise<void>;
  /** Every pending delivery, the earliest due first. */
  listPendingCallbacks(): Promise<PendingCallback[]>;
}

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
  /** Durable, versioned, scope-aware files (see `ArtifactStore`). */
  readonly artifacts: ArtifactStore;
  /** Run events, deleted with their session. */
  readonly events: EventStore;
  /** Per-session usage records (written with every run write) and the aggregates over them. */
  readonly usage: UsageStore;
  /** Ratings of assistant messages. */
  readonly feedback: FeedbackStore;
  /** Full-text search over message contents (kept current by every write of the messages). */
  readonly search: SearchStore;
  /** The session activity log, deleted with its session. */
  readonly activity: SessionActivityStore;
  /** Checkpoint retention: listing, measuring and pruning a thread's root checkpoints. */
  readonly checkpoints: CheckpointRetentionStore;
  /** Agents and providers managed through the API (global, versioned). */
  readonly registry: RegistryStore;
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
  /** Replaces the read-time session rules (abandoned status, TTL, their clock); see SessionPolicy. */
  setSessionPolicy(policy: Partial<SessionPolicy>): void;
  /**
   * Removes a run as if it had never been sent (double-texting `rollback`), in one atomic step:
   * the run with its callback records, its user message and every message after it, and the
   * checkpoints (with their writes) its thread gained after the run's `baseCheckpointId` (all of
   * them when it had none); the session's messageCount follows. The caller makes sure the run
   * no longer executes. RUN_NOT_FOUND when missing.
   */
  rollbackRun(runId: string): Promise<RollbackResult>;
}

/** What `rollbackRun` removed. */
export interface RollbackResult {
  messages: number;
  checkpoints: number;
}

export type StorageConfig =
  | { backend: 'memory' }
  | { backend: 'sqlite'; path: string }
  | { backend: 'postgres'; url: string; poolSize?: number };
