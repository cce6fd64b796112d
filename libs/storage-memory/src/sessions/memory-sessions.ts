// The memory backend's session store: session rows, their read-time policy, visibility and expiry.
import { randomUUID } from 'node:crypto';
import type {
  CreateSessionInput,
  ListSessionsQuery,
  Session,
  SessionPage,
  UpdateSessionInput,
} from '@cognition/contracts';
import {
  CreateSessionInputSchema,
  ListSessionsQuerySchema,
  StringMapSchema,
  UpdateSessionInputSchema,
  abandonedCutoff,
  readStatusOf,
} from '@cognition/contracts';
import type { Scope, SessionPolicy } from '@cognition/storage';
import {
  DEFAULT_SESSION_POLICY,
  StorageError,
  isSessionExpired,
  metadataMatches,
  parseInput,
  scopeMatches,
} from '@cognition/storage';
import { clone as copy } from '../clone';
import type { MemoryState, SessionRecord } from '../memory-state';
import { compareSessions } from './session-order';

/**
 * The memory backend's sessions, over the backend's state. Methods are synchronous (the backend
 * wraps them in promises), so each is atomic for async callers. Deleting a session drops its
 * row and message rows here, then hands the rest of what it owns to `onDeleted`.
 */
export class MemorySessions {
  private policy: SessionPolicy = { ...DEFAULT_SESSION_POLICY };

  constructor(
    private readonly state: MemoryState,
    private readonly now: () => Date,
    private readonly onDeleted: (id: string, threadId: string) => void,
  ) {}

  setPolicy(policy: Partial<SessionPolicy>): void {
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

  sweepExpired(limit: number): string[] {
    const ids: string[] = [];
    for (const [id, record] of this.state.sessions) {
      if (ids.length >= limit) break;
      if (this.expired(record.session)) ids.push(id);
    }
    for (const id of ids) this.delete(id, {}, true);
    return ids;
  }

  require(id: string): SessionRecord {
    const record = this.state.sessions.get(id);
    if (!record) throw StorageError.sessionNotFound(id);
    return record;
  }

  visible(id: string, scope: Scope): SessionRecord | undefined {
    const record = this.state.sessions.get(id);
    return record && scopeMatches(scope, record.session.scopes) && !this.expired(record.session)
      ? record
      : undefined;
  }

  requireVisible(id: string, scope: Scope): SessionRecord {
    const record = this.visible(id, parseInput(StringMapSchema, scope, 'scope'));
    if (!record) throw StorageError.sessionNotFound(id);
    return record;
  }

  create(input: CreateSessionInput, scope: Scope): Session {
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

  get(id: string, scope: Scope): Session | null {
    const record = this.visible(id, parseInput(StringMapSchema, scope, 'scope'));
    return record ? this.present(record.session) : null;
  }

  list(query: ListSessionsQuery, scope: Scope): SessionPage {
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

  update(id: string, input: UpdateSessionInput, scope: Scope): Session {
    const data = parseInput(UpdateSessionInputSchema, input, 'session update');
    const record = this.requireVisible(id, scope);
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

  updateMessageCount(id: string, delta: number): number {
    if (!Number.isInteger(delta)) {
      throw new StorageError(
        'VALIDATION_ERROR',
        'Invalid message count delta: must be an integer',
        {
          issues: [{ path: 'delta', message: 'must be an integer' }],
        },
      );
    }
    const record = this.require(id);
    record.session.messageCount = Math.max(0, record.session.messageCount + delta);
    return record.session.messageCount;
  }

  delete(id: string, scope: Scope, evenExpired = false): boolean {
    const record = evenExpired
      ? this.state.sessions.get(id)
      : this.visible(id, parseInput(StringMapSchema, scope, 'scope'));
    if (!record) return false;
    const { threadId } = record.session;
    this.state.sessions.delete(id);
    this.state.sessionByThread.delete(threadId);
    this.state.messages.delete(id);
    this.onDeleted(id, threadId);
    return true;
  }
}
