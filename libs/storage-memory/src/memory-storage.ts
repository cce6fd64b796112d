import type {
  MessageStore,
  RunStore,
  SessionStore,
  StorageBackend,
  ArtifactStoreOptions,
  CheckpointRetentionStore,
  SessionPolicy,
  RollbackResult,
  StorageHealth,
  UsageStore,
  FeedbackStore,
  SearchStore,
  StoreIndexConfig,
} from '@cognition/storage';
import {
  ENDED_RUN_STATUSES,
  ROOT_CHECKPOINT_NS,
  RunFencedError,
  StorageError,
  checkpointMessages,
  threadNamespaceLabel,
} from '@cognition/storage';
import { MemoryAnalytics } from './analytics/memory-analytics';
import { MemoryArtifactStore } from './memory-artifacts';
import { ProjectingMemorySaver } from './langgraph/memory-checkpointer';
import { MemoryStore } from './langgraph/memory-store';
import { MemoryEventStore } from './runs/memory-event-store';
import { MemoryActivityStore } from './sessions/memory-activity-store';
import { MemoryMessages } from './memory-messages';
import { MemoryPendingCallbacks } from './runs/memory-pending-callbacks';
import { MemoryRuns } from './runs/memory-runs';
import { MemoryRegistryStore } from './memory-registry';
import { MemoryScheduleStore } from './memory-schedules';
import { admitFiringsInMemory } from './memory-firings';
import { MemoryAssistantStore } from './memory-assistants';
import { MemorySessions } from './sessions/memory-sessions';
import type { MemoryState } from './memory-state';
export type { MemoryState, MessageRecord, SessionRecord } from './memory-state';

/**
 * Strictly increasing timestamps: two writes in one millisecond still order deterministically
 * (newest-first lists never tie).
 */
function monotonicClock(): () => Date {
  let last = 0;
  return () => {
    last = Math.max(Date.now(), last + 1);
    return new Date(last);
  };
}

/**
 * The in-process StorageBackend (kind `memory`). Every method checks and writes without an
 * `await` in between, so concurrent async callers see the same atomicity a database transaction
 * gives. Results are deep copies: callers never hold references into stored state.
 */
export class MemoryStorage implements StorageBackend {
  readonly kind = 'memory' as const;
  readonly state: MemoryState = {
    sessions: new Map(),
    sessionByThread: new Map(),
    messages: new Map(),
    runs: new Map(),
    runExtras: new Map(),
    callbackAttempts: new Map(),
  };
  readonly sessions: SessionStore;
  readonly messages: MessageStore;
  readonly runs: RunStore;
  private readonly sessionRows: MemorySessions;
  private readonly messageRows: MemoryMessages;
  private readonly runRows: MemoryRuns;
  readonly artifacts: MemoryArtifactStore;
  readonly events: MemoryEventStore;
  readonly usage: UsageStore;
  readonly feedback: FeedbackStore;
  readonly search: SearchStore;
  private readonly analytics: MemoryAnalytics;
  readonly activity: MemoryActivityStore;
  readonly checkpoints: CheckpointRetentionStore;
  readonly registry: MemoryRegistryStore;
  readonly schedules: MemoryScheduleStore;
  readonly assistants: MemoryAssistantStore;
  private readonly pendingCallbacks: MemoryPendingCallbacks;
  readonly checkpointer: ProjectingMemorySaver;
  readonly store: MemoryStore;
  private readonly now = monotonicClock();
  private closed = false;

  constructor(options: MemoryStorageOptions = {}) {
    this.artifacts = new MemoryArtifactStore(
      {
        sessionScopes: (id) => this.state.sessions.get(id)?.session.scopes,
        runSession: (id) => this.state.runs.get(id)?.sessionId,
        now: this.now,
      },
      options.artifacts,
    );
    this.checkpointer = new ProjectingMemorySaver({
      sessionOfThread: (threadId) => this.state.sessionByThread.get(threadId),
      applyProjection: (sessionId, checkpointId, messages, base) =>
        this.messageRows.applyProjection(sessionId, checkpointId, messages, base),
      fenceHolds: (fence) => this.runRows.fenceHolds(fence),
    });
    this.store = new MemoryStore(() => new Date(), options.storeIndex);
    this.registry = new MemoryRegistryStore(this.now);
    this.schedules = new MemoryScheduleStore(this.now, (firings, recordRun) => {
      const rows = {
        state: this.state,
        sessions: this.sessionRows,
        runs: this.runRows,
        messages: this.messageRows,
      };
      return admitFiringsInMemory(rows, firings, recordRun);
    });
    this.assistants = new MemoryAssistantStore(this.now);
    this.analytics = new MemoryAnalytics({
      sessions: () => [...this.state.sessions.values()].map((record) => record.session),
      session: (id) => this.state.sessions.get(id)?.session,
      messages: (id) => (this.state.messages.get(id) ?? []).map((row) => row.message),
      now: () => new Date(),
    });
    this.usage = this.analytics.usage;
    this.feedback = this.analytics.feedback;
    this.search = this.analytics.search;
    this.events = new MemoryEventStore(
      (sessionId) => this.state.sessions.has(sessionId),
      (fence) => this.runRows.fenceHolds(fence),
      ({ runId, usage }) => {
        if (this.state.runs.has(runId)) this.runRows.update(runId, { usage });
      },
    );
    this.checkpoints = {
      list: (threadId) => this.run(() => this.checkpointer.rootCheckpoints(threadId)),
      delete: (threadId, ids) =>
        this.run(() => this.checkpointer.deleteRootCheckpoints(threadId, ids)),
      footprint: (threadId) => this.run(() => this.checkpointer.footprint(threadId)),
    };
    this.activity = new MemoryActivityStore({
      exists: (id) => this.state.sessions.has(id),
      visible: (id, scope) => this.sessionRows.visible(id, scope) !== undefined,
      now: this.now,
    });
    this.pendingCallbacks = new MemoryPendingCallbacks((runId) => this.state.runs.has(runId));
    const sessions = new MemorySessions(this.state, this.now, (id, threadId) =>
      this.deleteSessionData(id, threadId),
    );
    this.sessionRows = sessions;
    this.sessions = {
      create: (input, scope) => this.run(() => sessions.create(input, scope)),
      get: (id, scope) => this.run(() => sessions.get(id, scope)),
      list: (query, scope) => this.run(() => sessions.list(query, scope)),
      update: (id, input, scope) => this.run(() => sessions.update(id, input, scope)),
      updateMessageCount: (id, delta) => this.run(() => sessions.updateMessageCount(id, delta)),
      delete: (id, scope) => this.run(() => sessions.delete(id, scope)),
      sweepExpired: (limit) => this.run(() => sessions.sweepExpired(limit)),
    };
    const messages = new MemoryMessages(this.state, sessions, this.now);
    this.messageRows = messages;
    this.messages = {
      create: (input) => this.run(() => messages.create(input)),
      get: (sessionId, messageId, scope) =>
        this.run(() => messages.get(sessionId, messageId, scope)),
      page: (sessionId, query, scope) => this.run(() => messages.page(sessionId, query, scope)),
      listAll: (sessionId, scope) => this.run(() => messages.listAll(sessionId, scope)),
      deleteBySession: (sessionId) => this.run(() => messages.deleteBySession(sessionId)),
    };
    const runs = new MemoryRuns(
      this.state,
      (id) => sessions.require(id),
      this.now,
      // A run's contribution to its session's usage records changes with the run.
      (before, after) => this.analytics.recordRun(before, after),
    );
    this.runRows = runs;
    this.runs = {
      create: (input) => this.run(() => runs.create(input)),
      update: (id, input, fence) => this.run(() => runs.update(id, input, fence)),
      promote: (id) => this.run(() => runs.promote(id)),
      settlePaused: (id, change) => this.run(() => runs.settlePaused(id, change)),
      cancelPending: (id, finishedAt) => this.run(() => runs.cancelPending(id, finishedAt)),
      claim: (id, node, now, until) => this.run(() => runs.claim(id, node, now, until)),
      renewLease: (id, node, until) => this.run(() => runs.renewLease(id, node, until)),
      fenceOf: (id) => this.run(() => runs.fenceOf(id)),
      get: (id) => this.run(() => runs.get(id)),
      list: (sessionId) => this.run(() => runs.list(sessionId)),
      delete: (id) =>
        this.run(() => {
          const run = runs.get(id);
          if (!run) return false;
          if (!ENDED_RUN_STATUSES.includes(run.status)) {
            throw new StorageError('CONFLICT', `Run ${id} has not ended (${run.status})`);
          }
          runs.delete(id);
          this.pendingCallbacks.deleteRun(id);
          return true;
        }),
      getActive: (sessionId) => this.run(() => runs.getActive(sessionId)),
      getActiveAndPending: (sessionId) => this.run(() => runs.getActiveAndPending(sessionId)),
      listActive: () => this.run(() => runs.listActive()),
      listPending: (sessionId) => this.run(() => runs.listPending(sessionId)),
      pendingInput: (id) => this.run(() => runs.pendingInput(id)),
      recordCallbackAttempt: (input) => this.run(() => runs.recordCallbackAttempt(input)),
      listCallbackAttempts: (runId) => this.run(() => runs.listCallbackAttempts(runId)),
      savePendingCallback: (input, fence) => {
        // Under a fence: stored only while the run is still held under it (run fencing).
        if (fence && this.state.runs.has(input.runId) && !runs.fenceHolds(fence)) {
          return Promise.reject(new RunFencedError([input.runId]));
        }
        return this.pendingCallbacks.save(input);
      },
      claimCallbackAttempt: (deliveryId, attempt) =>
        this.pendingCallbacks.claim(deliveryId, attempt),
      settlePendingCallback: (deliveryId, next) => this.pendingCallbacks.settle(deliveryId, next),
      listPendingCallbacks: () => this.pendingCallbacks.list(),
    };
  }

  /** Repairs every session whose projection does not match its thread's latest checkpoint. */
  async initialize(): Promise<void> {
    this.closed = false;
    for (const [sessionId, record] of [...this.state.sessions]) {
      const latest = this.checkpointer.latestRootCheckpointId(record.session.threadId);
      if (latest !== record.projectedCheckpointId) await this.rebuildMessageProjection(sessionId);
    }
  }

  close(): Promise<void> {
    this.closed = true;
    return Promise.resolve();
  }

  healthCheck(): Promise<StorageHealth> {
    const started = performance.now();
    const ok = !this.closed;
    const health: StorageHealth = {
      backend: this.kind,
      ok,
      latencyMs: performance.now() - started,
    };
    if (!ok) health.error = 'closed';
    return Promise.resolve(health);
  }

  async rebuildMessageProjection(sessionId: string): Promise<{ messages: number }> {
    for (;;) {
      const record = this.sessionRows.require(sessionId);
      const threadId = record.session.threadId;
      const latestId = this.checkpointer.latestRootCheckpointId(threadId);
      const tuple =
        latestId === null
          ? undefined
          : await this.checkpointer.getTuple({
              configurable: {
                thread_id: threadId,
                checkpoint_ns: ROOT_CHECKPOINT_NS,
                checkpoint_id: latestId,
              },
            });
      // A checkpoint written while we read projected itself; start over from the new latest.
      if (this.checkpointer.latestRootCheckpointId(threadId) !== latestId) continue;
      this.sessionRows.require(sessionId);
      this.messageRows.applyProjection(
        sessionId,
        latestId,
        tuple ? checkpointMessages(tuple.checkpoint) : [],
      );
      return { messages: this.state.messages.get(sessionId)?.length ?? 0 };
    }
  }

  setSessionPolicy(policy: Partial<SessionPolicy>): void {
    this.sessionRows.setPolicy(policy);
  }

  /**
   * Drops what else a deleted session owned: its events, activity, runs (with their pending
   * deliveries), artifacts, analytics, its thread's checkpoints and store items.
   */
  private deleteSessionData(id: string, threadId: string): void {
    this.events.deleteSession(id);
    this.activity.deleteSession(id);
    for (const [runId, run] of this.state.runs) {
      if (run.sessionId !== id) continue;
      this.runRows.delete(runId);
      this.pendingCallbacks.deleteRun(runId);
    }
    this.artifacts.deleteSessionArtifacts(id);
    this.analytics.deleteSession(id);
    this.checkpointer.deleteThreadNow(threadId);
    this.store.deleteWhereNamespaceContains(threadNamespaceLabel(threadId));
  }

  rollbackRun(runId: string): Promise<RollbackResult> {
    return this.run(() => {
      const run = this.state.runs.get(runId);
      const extras = this.runRows.extras(runId);
      if (!run || !extras) throw new StorageError('RUN_NOT_FOUND', `Run not found: ${runId}`);
      const record = this.sessionRows.require(run.sessionId);
      const rows = this.state.messages.get(run.sessionId) ?? [];
      const from = rows.findIndex((row) => row.message.id === run.inputMessageId);
      const messages = from < 0 ? 0 : rows.length - from;
      if (from >= 0) this.state.messages.set(run.sessionId, rows.slice(0, from));
      let checkpoints = 0;
      if (run.startedAt !== null) {
        checkpoints = this.checkpointer.deleteCheckpointsAfter(
          record.session.threadId,
          extras.baseCheckpointId,
        );
        record.projectedCheckpointId = extras.baseCheckpointId;
      }
      record.session = {
        ...record.session,
        messageCount: record.session.messageCount - messages,
        updatedAt: this.now(),
      };
      this.runRows.delete(runId);
      this.pendingCallbacks.deleteRun(runId);
      return { messages, checkpoints };
    });
  }

  /** Runs a synchronous operation as a promise, turning throws into rejections. */
  private run<T>(operation: () => T): Promise<T> {
    try {
      return Promise.resolve(operation());
    } catch (error) {
      return Promise.reject(error instanceof Error ? error : new Error(String(error)));
    }
  }
}

/**
 * Creates an empty in-process storage backend (kind `memory`): for tests and ephemeral use;
 * nothing survives the process.
 */
export interface MemoryStorageOptions {
  artifacts?: ArtifactStoreOptions;
  /** The store's semantic index (`langgraph.json`'s `store.index`); none by default. */
  storeIndex?: StoreIndexConfig;
}

export function createMemoryStorage(options?: MemoryStorageOptions): StorageBackend {
  return new MemoryStorage(options);
}
