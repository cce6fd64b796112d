import { randomUUID } from 'node:crypto';
import { compareSessions } from './session-order';
import type {
  CreateMessageInput,
  CreateSessionInput,
  ListSessionsQuery,
  Message,
  MessagePage,
  MessagePageQuery,
  Session,
  SessionPage,
  UpdateSessionInput,
} from '@cognition/contracts';
import {
  CreateMessageInputSchema,
  CreateSessionInputSchema,
  ListSessionsQuerySchema,
  MessagePageQuerySchema,
  StringMapSchema,
  UpdateSessionInputSchema,
  abandonedCutoff,
  readStatusOf,
} from '@cognition/contracts';
import type {
  MessageStore,
  RunStore,
  Scope,
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
} from '@cognition/storage';
import {
  DEFAULT_SESSION_POLICY,
  isSessionExpired,
  ROOT_CHECKPOINT_NS,
  StorageError,
  checkpointMessages,
  metadataMatches,
  parseInput,
  planProjection,
  projectCheckpointMessages,
  scopeMatches,
  threadNamespaceLabel,
} from '@cognition/storage';
import type { BaseMessage } from '@langchain/core/messages';
import { clone } from './clone';
import { MemoryAnalytics } from './memory-analytics';
import { MemoryArtifactStore } from './memory-artifacts';
import { ProjectingMemorySaver } from './memory-checkpointer';
import type { MessagesBase } from './memory-checkpointer';
import { MemoryStore } from './memory-store';
import { MemoryEventStore } from './memory-event-store';
import { MemoryActivityStore } from './memory-activity-store';
import { MemoryPendingCallbacks } from './memory-pending-callbacks';
import { MemoryRuns } from './memory-runs';
import { MemoryRegistryStore } from './memory-registry';
import type { MemoryState, MessageRecord, SessionRecord } from './memory-state';
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

const copy = clone;

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
  private policy: SessionPolicy = { ...DEFAULT_SESSION_POLICY };
  private readonly pendingCallbacks: MemoryPendingCallbacks;
  readonly checkpointer: ProjectingMemorySaver;
  readonly store: MemoryStore;
  private readonly now = monotonicClock();
  private closed = false;

  constructor(options: { artifacts?: ArtifactStoreOptions } = {}) {
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
        this.applyProjection(sessionId, checkpointId, messages, base),
    });
    this.store = new MemoryStore(() => new Date());
    this.registry = new MemoryRegistryStore(this.now);
    this.analytics = new MemoryAnalytics({
      sessions: () => [...this.state.sessions.values()].map((record) => record.session),
      session: (id) => this.state.sessions.get(id)?.session,
      messages: (id) => (this.state.messages.get(id) ?? []).map((row) => row.message),
      now: () => new Date(),
    });
    this.usage = this.analytics.usage;
    this.feedback = this.analytics.feedback;
    this.search = this.analytics.search;
    this.events = new MemoryEventStore((sessionId) => this.state.sessions.has(sessionId));
    this.checkpoints = {
      list: (threadId) => this.run(() => this.checkpointer.rootCheckpoints(threadId)),
      delete: (threadId, ids) =>
        this.run(() => this.checkpointer.deleteRootCheckpoints(threadId, ids)),
      footprint: (threadId) => this.run(() => this.checkpointer.footprint(threadId)),
    };
    this.activity = new MemoryActivityStore({
      exists: (id) => this.state.sessions.has(id),
      visible: (id, scope) => this.visibleSession(id, scope) !== undefined,
      now: this.now,
    });
    this.pendingCallbacks = new MemoryPendingCallbacks((runId) => this.state.runs.has(runId));
    this.sessions = {
      create: (input, scope) => this.run(() => this.createSession(input, scope)),
      get: (id, scope) => this.run(() => this.getSession(id, scope)),
      list: (query, scope) => this.run(() => this.listSessions(query, scope)),
      update: (id, input, scope) => this.run(() => this.updateSession(id, input, scope)),
      updateMessageCount: (id, delta) => this.run(() => this.updateMessageCount(id, delta)),
      delete: (id, scope) => this.run(() => this.deleteSession(id, scope)),
      sweepExpired: (limit) => this.run(() => this.sweepExpired(limit)),
    };
    this.messages = {
      create: (input) => this.run(() => this.createMessage(input)),
      get: (sessionId, messageId, scope) =>
        this.run(() => this.getMessage(sessionId, messageId, scope)),
      page: (sessionId, query, scope) => this.run(() => this.pageMessages(sessionId, query, scope)),
      listAll: (sessionId, scope) => this.run(() => this.listMessages(sessionId, scope)),
      deleteBySession: (sessionId) => this.run(() => this.deleteMessages(sessionId)),
    };
    const runs = new MemoryRuns(
      this.state,
      (id) => this.requireSession(id),
      this.now,
      // A run's contribution to its session's usage records changes with the run.
      (before, after) => this.analytics.recordRun(before, after),
    );
    this.runRows = runs;
    this.runs = {
      create: (input) => this.run(() => runs.create(input)),
      update: (id, input) => this.run(() => runs.update(id, input)),
      promote: (id) => this.run(() => runs.promote(id)),
      settlePaused: (id, change) => this.run(() => runs.settlePaused(id, change)),
      claim: (id, node, now, until) => this.run(() => runs.claim(id, node, now, until)),
      renewLease: (id, node, until) => this.run(() => runs.renewLease(id, node, until)),
      get: (id) => this.run(() => runs.get(id)),
      list: (sessionId) => this.run(() => runs.list(sessionId)),
      getActive: (sessionId) => this.run(() => runs.getActive(sessionId)),
      listActive: () => this.run(() => runs.listActive()),
      listPending: (sessionId) => this.run(() => runs.listPending(sessionId)),
      pendingInput: (id) => this.run(() => runs.pendingInput(id)),
      recordCallbackAttempt: (input) => this.run(() => runs.recordCallbackAttempt(input)),
      listCallbackAttempts: (runId) => this.run(() => runs.listCallbackAttempts(runId)),
      savePendingCallback: (input) => this.pendingCallbacks.save(input),
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
      const record = this.requireSession(sessionId);
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
      this.requireSession(sessionId);
      this.applyProjection(sessionId, latestId, tuple ? checkpointMessages(tuple.checkpoint) : []);
      return { messages: this.state.messages.get(sessionId)?.length ?? 0 };
    }
  }

  setSessionPolicy(policy: Partial<SessionPolicy>): void {
    this.policy = { ...this.policy, ...policy };
  }

  /** The session as reads report it: `abandoned` computed, a deep copy. */
  private present(session: Session): Session {
    const status = readStatusOf(session, this.policy.now(), this.policy.abandonAfterSeconds);
    return copy({ ...session, status });
  }

  private expired(session: Session): boolean {
    return isSessionExpired(session, this.policy);
  }

  private sweepExpired(limit: number): string[] {
    const ids: string[] = [];
    for (const [id, record] of this.state.sessions) {
      if (ids.length >= limit) break;
      if (this.expired(record.session)) ids.push(id);
    }
    for (const id of ids) this.deleteSession(id, {}, true);
    return ids;
  }

  rollbackRun(runId: string): Promise<RollbackResult> {
    return this.run(() => {
      const run = this.state.runs.get(runId);
      const extras = this.runRows.extras(runId);
      if (!run || !extras) throw new StorageError('RUN_NOT_FOUND', `Run not found: ${runId}`);
      const record = this.requireSession(run.sessionId);
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

  private requireSession(id: string): SessionRecord {
    const record = this.state.sessions.get(id);
    if (!record) throw StorageError.sessionNotFound(id);
    return record;
  }

  private visibleSession(id: string, scope: Scope): SessionRecord | undefined {
    const record = this.state.sessions.get(id);
    return record && scopeMatches(scope, record.session.scopes) && !this.expired(record.session)
      ? record
      : undefined;
  }

  private requireVisibleSession(id: string, scope: Scope): SessionRecord {
    const record = this.visibleSession(id, parseInput(StringMapSchema, scope, 'scope'));
    if (!record) throw StorageError.sessionNotFound(id);
    return record;
  }

  // Sessions

  private createSession(input: CreateSessionInput, scope: Scope): Session {
    const data = parseInput(CreateSessionInputSchema, input, 'session');
    const scopes = parseInput(StringMapSchema, scope, 'scope');
    const id = data.id ?? randomUUID();
    if (this.state.sessions.has(id))
      throw new StorageError('CONFLICT', `Session already exists: ${id}`);
    const now = this.now();
    const session: Session = {
      id,
      threadId: randomUUID(),
      title: data.title ?? null,
      status: 'active',
      agentName: data.agentName,
      config: data.config,
      scopes,
      metadata: data.metadata,
      messageCount: 0,
      version: 1,
      parentId: data.parentId ?? null,
      workspacePath: data.workspacePath ?? null,
      systemPrompt: data.systemPrompt ?? null,
      task: data.task ?? null,
      endedAt: null,
      lastActivityAt: now,
      expiresAt: data.expiresAt ?? null,
      checkpointRetention: data.checkpointRetention ?? null,
      createdAt: now,
      updatedAt: now,
    };
    this.state.sessions.set(id, { session: copy(session), projectedCheckpointId: null });
    this.state.sessionByThread.set(session.threadId, id);
    this.state.messages.set(id, []);
    return this.present(session);
  }

  private getSession(id: string, scope: Scope): Session | null {
    const record = this.visibleSession(id, parseInput(StringMapSchema, scope, 'scope'));
    return record ? this.present(record.session) : null;
  }

  private listSessions(query: ListSessionsQuery, scope: Scope): SessionPage {
    const q = parseInput(ListSessionsQuerySchema, query, 'session query');
    const callerScope = parseInput(StringMapSchema, scope, 'scope');
    const needle = q.titleContains?.toLowerCase();
    const cutoff = abandonedCutoff(this.policy.now(), this.policy.abandonAfterSeconds);
    const idle = (session: Session) =>
      cutoff !== null && session.lastActivityAt.getTime() <= cutoff.getTime();
    const statusMatches = (session: Session): boolean => {
      if (q.status === undefined) return true;
      if (q.status === 'abandoned') return session.status === 'active' && idle(session);
      if (q.status === 'active') return session.status === 'active' && !idle(session);
      return session.status === q.status;
    };
    const matching = [...this.state.sessions.values()]
      .map((record) => record.session)
      .filter(
        (session) =>
          scopeMatches(callerScope, session.scopes) &&
          !this.expired(session) &&
          metadataMatches(q.metadata, session.metadata) &&
          statusMatches(session) &&
          (q.agentName === undefined || session.agentName === q.agentName) &&
          (needle === undefined || (session.title ?? '').toLowerCase().includes(needle)),
      )
      .sort(compareSessions(q.sort, q.order));
    return {
      sessions: matching.slice(q.offset, q.offset + q.limit).map((s) => this.present(s)),
      total: matching.length,
    };
  }

  private updateSession(id: string, input: UpdateSessionInput, scope: Scope): Session {
    const data = parseInput(UpdateSessionInputSchema, input, 'session update');
    const record = this.requireVisibleSession(id, scope);
    const current = record.session;
    if (data.expectedVersion !== undefined && data.expectedVersion !== current.version) {
      throw new StorageError(
        'VERSION_CONFLICT',
        `Session ${id} is at version ${current.version}, not ${data.expectedVersion}`,
      );
    }
    const now = this.now();
    const keep = <T>(value: T | undefined, previous: T): T =>
      value !== undefined ? value : previous;
    const next: Session = {
      ...current,
      title: keep(data.title, current.title),
      status: data.status ?? current.status,
      agentName: data.agentName ?? current.agentName,
      config: data.config ?? current.config,
      metadata: data.metadata ?? current.metadata,
      systemPrompt: keep(data.systemPrompt, current.systemPrompt),
      task: keep(data.task, current.task),
      endedAt: keep(data.endedAt, current.endedAt),
      expiresAt: keep(data.expiresAt, current.expiresAt),
      checkpointRetention: keep(data.checkpointRetention, current.checkpointRetention),
      version: current.version + 1,
      lastActivityAt: now,
      updatedAt: now,
    };
    record.session = copy(next);
    return this.present(next);
  }

  private updateMessageCount(id: string, delta: number): number {
    if (!Number.isInteger(delta)) {
      throw new StorageError(
        'VALIDATION_ERROR',
        'Invalid message count delta: must be an integer',
        {
          issues: [{ path: 'delta', message: 'must be an integer' }],
        },
      );
    }
    const record = this.requireSession(id);
    record.session.messageCount = Math.max(0, record.session.messageCount + delta);
    return record.session.messageCount;
  }

  private deleteSession(id: string, scope: Scope, evenExpired = false): boolean {
    const record = evenExpired
      ? this.state.sessions.get(id)
      : this.visibleSession(id, parseInput(StringMapSchema, scope, 'scope'));
    if (!record) return false;
    const { threadId } = record.session;
    this.state.sessions.delete(id);
    this.state.sessionByThread.delete(threadId);
    this.state.messages.delete(id);
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
    return true;
  }

  // Messages

  private createMessage(input: CreateMessageInput): Message {
    const data = parseInput(CreateMessageInputSchema, input, 'message');
    const record = this.requireSession(data.sessionId);
    const rows = this.state.messages.get(data.sessionId) ?? [];
    const id = data.id ?? randomUUID();
    if (rows.some((row) => row.message.id === id)) {
      throw new StorageError('CONFLICT', `Message already exists: ${id}`);
    }
    const message: Message = {
      id,
      sessionId: data.sessionId,
      role: data.role,
      content: data.content,
      toolCalls: data.toolCalls,
      toolCallId: data.toolCallId ?? null,
      tokenCount: data.tokenCount ?? null,
      modelUsed: data.modelUsed ?? null,
      parentId: data.parentId ?? null,
      metadata: data.metadata,
      createdAt: this.now(),
    };
    const seq = rows.length === 0 ? 0 : (rows[rows.length - 1]?.seq ?? 0) + 1;
    rows.push({ message: copy(message), seq, pending: true });
    this.state.messages.set(data.sessionId, rows);
    record.session.messageCount += 1;
    record.session.updatedAt = message.createdAt;
    record.session.lastActivityAt = message.createdAt;
    return message;
  }

  private getMessage(sessionId: string, messageId: string, scope: Scope): Message | null {
    if (!this.visibleSession(sessionId, parseInput(StringMapSchema, scope, 'scope'))) return null;
    const row = this.state.messages
      .get(sessionId)
      ?.find((candidate) => candidate.message.id === messageId);
    return row ? copy(row.message) : null;
  }

  private pageMessages(sessionId: string, query: MessagePageQuery, scope: Scope): MessagePage {
    const { limit, offset, order } = parseInput(
      MessagePageQuerySchema,
      query,
      'message page query',
    );
    this.requireVisibleSession(sessionId, scope);
    const stored = this.state.messages.get(sessionId) ?? [];
    const rows = order === 'desc' ? [...stored].reverse() : stored;
    return {
      messages: rows.slice(offset, offset + limit).map((row) => copy(row.message)),
      total: rows.length,
      hasMore: offset + limit < rows.length,
    };
  }

  private listMessages(sessionId: string, scope: Scope): Message[] {
    this.requireVisibleSession(sessionId, scope);
    return (this.state.messages.get(sessionId) ?? []).map((row) => copy(row.message));
  }

  private deleteMessages(sessionId: string): number {
    const record = this.state.sessions.get(sessionId);
    if (!record) return 0;
    const deleted = this.state.messages.get(sessionId)?.length ?? 0;
    this.state.messages.set(sessionId, []);
    record.session.messageCount = 0;
    return deleted;
  }

  /**
   * Makes the session's rows the projection of `messages` (see planProjection). Synchronous.
   * With `base`, when the rows are the projection of that checkpoint, the rows before the
   * base's kept messages stay as they are and only the rest is planned: a step costs what it
   * changed.
   */
  private applyProjection(
    sessionId: string,
    checkpointId: string | null,
    messages: BaseMessage[],
    base?: MessagesBase,
  ): void {
    const record = this.requireSession(sessionId);
    const all = this.state.messages.get(sessionId) ?? [];
    const from =
      base && record.projectedCheckpointId === base.checkpointId
        ? keptMessageCount(messages, base.kept, all)
        : 0;
    const kept = all.slice(0, from);
    const rows = from === 0 ? all : all.slice(from);
    const byId = new Map(rows.map((row) => [row.message.id, row]));
    const plan = planProjection(
      rows.map((row) => ({ id: row.message.id, pending: row.pending })),
      projectCheckpointMessages(sessionId, messages, from),
      from,
    );
    const now = this.now();
    const tail = plan.rows.map((planned): MessageRecord => {
      if (planned.kind === 'pending') {
        const row = byId.get(planned.id) as MessageRecord;
        return { ...row, seq: planned.seq };
      }
      const { seq: _seq, ...message } = planned.message;
      const createdAt = byId.get(message.id)?.message.createdAt ?? now;
      return { message: copy({ ...message, createdAt }), seq: planned.seq, pending: false };
    });
    this.state.messages.set(sessionId, from === 0 ? tail : kept.concat(tail));
    // A message added or removed is activity on the session (lists sort by updatedAt).
    if (plan.messageCount !== all.length) {
      record.session.updatedAt = now;
      record.session.lastActivityAt = now;
    }
    record.session.messageCount = plan.messageCount;
    record.projectedCheckpointId = checkpointId;
  }
}

/**
 * How many leading rows stay as they are: the messages among the first `kept` checkpoint
 * entries (all of them are messages in a thread the runtime writes), provided the rows there
 * are those messages' projection in order; 0 (project everything) otherwise.
 */
function keptMessageCount(
  messages: readonly BaseMessage[],
  kept: number,
  rows: readonly MessageRecord[],
): number {
  const count = Math.min(kept, messages.length, rows.length);
  if (count === 0) return 0;
  const row = rows[count - 1];
  const id = messages[count - 1]?.id;
  const aligned = row?.seq === count - 1 && (id === undefined || row.message.id === id);
  return aligned ? count : 0;
}

/**
 * Creates an empty in-process storage backend (kind `memory`): for tests and ephemeral use;
 * nothing survives the process.
 */
export function createMemoryStorage(options?: {
  artifacts?: ArtifactStoreOptions;
}): StorageBackend {
  return new MemoryStorage(options);
}
