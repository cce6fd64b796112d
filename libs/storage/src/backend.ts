import type { BaseCheckpointSaver, BaseStore } from '@langchain/langgraph-checkpoint';
import type { SessionActivityStore } from './domains/activity';
import type { ArtifactStore } from './domains/artifacts';
import type { AssistantStore } from './domains/assistants';
import type { CheckpointRetentionStore } from './domains/checkpoints';
import type { EventStore } from './domains/events';
import type { FeedbackStore } from './domains/feedback';
import type { MessageStore } from './domains/messages';
import type { RegistryStore } from './domains/registry';
import type { RunStore } from './domains/runs';
import type { ScheduleStore } from './domains/schedules';
import type { SearchStore } from './domains/search';
import type { SessionPolicy, SessionStore } from './domains/sessions';
import type { UsageStore } from './domains/usage';

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
  /** Cron and delayed-run schedules per tenant, and their firings (claimed once across nodes). */
  readonly schedules: ScheduleStore;
  /** Assistants made through the LangGraph API, per tenant, with their versions. */
  readonly assistants: AssistantStore;
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
