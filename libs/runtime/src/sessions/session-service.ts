import { randomUUID } from 'node:crypto';
import { join } from 'node:path';
import type {
  CreateSessionInput,
  Session,
  SessionActivity,
  SessionActivityPage,
  SessionActivityQuery,
  SessionEventType,
  StringMap,
  ThreadHistoryPage,
  UpdateSessionInput,
} from '@cognition/contracts';
import type { Scope, StorageBackend } from '@cognition/storage';
import {
  checkpointWithMessage,
  parseRetention,
  pruneThread,
  putCheckpointCopy,
  rootCheckpoint,
  scopeMatches,
  threadHistory,
} from '@cognition/storage';
import type { CheckpointTuple } from '@langchain/langgraph-checkpoint';
import { RuntimeError } from '../errors';
import type { Logger } from '../logger';
import type { SessionEventListener } from './session-events';
import { SessionEventBus } from './session-events';
import type { SessionHook, SessionHookPoint } from './session-pipeline';
import { SessionPipeline } from './session-pipeline';
import { clearValues, forkValues } from './thread-edits';

/** What the session actions need of the run machinery. */
export interface SessionRunControl {
  /** Cancels the session's active run (bounded wait); `run` null when it had none. */
  abort(sessionId: string, scope: Scope): Promise<{ run: { id: string } | null; aborted: boolean }>;
}

export interface SessionServiceOptions {
  storage: StorageBackend;
  runs: SessionRunControl;
  logger: Logger;
  /**
   * Where sessions keep their files (`<root>/<session id>`, the RunManager's `workspaceRoot`):
   * a new session's `workspacePath` is filled with it. Absent: left null.
   */
  workspaceRoot?: string;
  /**
   * The server's checkpoint retention (`COGNITION_CHECKPOINT_RETENTION`, default `all`); a
   * session's own `checkpointRetention` wins.
   */
  checkpointRetention?: string;
}

/** A point of the thread: a checkpoint id or a message id (exactly one). */
export interface ThreadPoint {
  checkpointId?: string | undefined;
  messageId?: string | undefined;
}

type Versioned = { expectedVersion?: number | undefined };

const TERMINAL = new Set<Session['status']>(['completed', 'failed']);

/** Page size of a watch stream's replay from the activity log. */
const REPLAY_BATCH = 200;

/** Checkpoints deleted per retention step. */
const PRUNE_BATCH = 500;

/**
 * The session model over the storage port: every write goes through the one execute pipeline
 * (see SessionPipeline), the actions (suspend, resume, complete, fail, clear, fork, rewind,
 * metadata keys, the PATCH as `update`), the thread's history, the activity log and the live
 * watch stream. Errors carry codes: SESSION_NOT_FOUND / NOT_FOUND / MESSAGE_NOT_FOUND (404),
 * VERSION_CONFLICT / CONFLICT (wrong state) / RUN_IN_PROGRESS (409), VALIDATION_ERROR (422).
 */
export class SessionService {
  readonly events: SessionEventBus;
  private readonly pipeline: SessionPipeline;

  constructor(private readonly o: SessionServiceOptions) {
    this.events = new SessionEventBus((error) =>
      o.logger.error({ err: error }, 'session event listener failed'),
    );
    this.pipeline = new SessionPipeline(o.storage, this.events, o.logger);
  }

  /** In-process listener of the pipeline's events (`'*'`: all); returns its remover. */
  on(type: SessionEventType | '*', listener: SessionEventListener): () => void {
    return this.events.on(type, listener);
  }

  /** Registers a pipeline hook (higher priority first); returns its remover. */
  hook(point: SessionHookPoint, hook: SessionHook, options?: { priority?: number }): () => void {
    return this.pipeline.hook(point, hook, options);
  }

  async create(input: CreateSessionInput, scope: Scope): Promise<Session> {
    const session = await this.o.storage.sessions.create(this.withWorkspace(input), scope);
    await this.pipeline.record(session.id, session, 'session.saved', 'create', {
      versionAfter: session.version,
      statusAfter: session.status,
    });
    return session;
  }

  /**
   * PATCH: the given fields (metadata and config replaced whole). A status set to `completed`
   * or `failed` stamps `endedAt`; any other status clears it.
   */
  update(id: string, changes: Omit<UpdateSessionInput, 'endedAt'>, scope: Scope): Promise<Session> {
    const { expectedVersion, ...fields } = changes;
    return this.pipeline.execute(id, scope, {
      name: 'update',
      expectedVersion,
      apply: (session) => {
        const next: Session = { ...session };
        const target = next as Record<string, unknown>;
        for (const [key, value] of Object.entries(fields)) {
          if (value !== undefined) target[key] = value;
        }
        if (fields.status !== undefined && fields.status !== session.status) {
          next.endedAt = TERMINAL.has(fields.status) ? new Date() : null;
        }
        return Promise.resolve({
          session: next,
          detail: { fields: Object.keys(fields).join(',') },
        });
      },
    });
  }

  /** active (or error) → suspended; a running run is aborted first. */
  suspend(id: string, options: Versioned, scope: Scope): Promise<Session> {
    return this.pipeline.execute(id, scope, {
      name: 'suspend',
      expectedVersion: options.expectedVersion,
      apply: async (session) => {
        this.requireStatus(session, 'suspend', ['active', 'error']);
        const { run, aborted } = await this.o.runs.abort(id, scope);
        const detail: StringMap = run && aborted ? { aborted_run_id: run.id } : {};
        const next: Session = { ...session, status: 'suspended' };
        return { session: next, detail };
      },
    });
  }

  /** suspended (or error) → active. */
  resume(id: string, options: Versioned, scope: Scope): Promise<Session> {
    return this.transition(id, 'resume', options, scope, ['suspended', 'error'], 'active');
  }

  complete(id: string, options: Versioned, scope: Scope): Promise<Session> {
    return this.transition(
      id,
      'complete',
      options,
      scope,
      ['active', 'suspended', 'error'],
      'completed',
    );
  }

  fail(id: string, options: Versioned & { reason?: string | undefined }, scope: Scope) {
    return this.transition(
      id,
      'fail',
      options,
      scope,
      ['active', 'suspended', 'error'],
      'failed',
      options.reason !== undefined ? { reason: options.reason } : {},
    );
  }

  /**
   * The next turn starts from an empty conversation: a new head checkpoint whose state keeps
   * every message (the history stays readable) with a clear mark the model's view starts after.
   * Identity, agent and metadata are kept. Refused while a run is active.
   */
  clear(id: string, options: Versioned, scope: Scope): Promise<Session> {
    return this.pipeline.execute(id, scope, {
      name: 'clear',
      expectedVersion: options.expectedVersion,
      apply: async (session) => {
        this.requireNotTerminal(session, 'clear');
        await this.requireIdle(session);
        const head = await rootCheckpoint(this.o.storage.checkpointer, session.threadId);
        if (!head) return { session, detail: { checkpoint_id: '' } };
        const checkpointId = await putCheckpointCopy(
          this.o.storage.checkpointer,
          head,
          session.threadId,
          clearValues,
        );
        return { session, detail: { checkpoint_id: checkpointId } };
      },
    });
  }

  /**
   * A new session (parent: the source; same agent, config, metadata, system prompt, task and
   * scopes) whose thread starts from the source's state at `point` (latest when omitted), with
   * new message ids. The source is not written.
   */
  async fork(
    id: string,
    options: ThreadPoint & { title?: string | null | undefined },
    scope: Scope,
  ): Promise<Session> {
    let created: Session | null = null;
    await this.pipeline.execute(id, scope, {
      name: 'fork',
      save: false,
      apply: async (source) => {
        const point =
          options.checkpointId !== undefined || options.messageId !== undefined
            ? await this.resolvePoint(source, options, scope)
            : await rootCheckpoint(this.o.storage.checkpointer, source.threadId);
        const fork = await this.o.storage.sessions.create(
          this.withWorkspace({
            title: options.title !== undefined ? options.title : source.title,
            agentName: source.agentName,
            config: source.config,
            metadata: source.metadata,
            parentId: source.id,
            systemPrompt: source.systemPrompt,
            task: source.task,
            checkpointRetention: source.checkpointRetention,
          }),
          source.scopes,
        );
        try {
          if (point) {
            await putCheckpointCopy(this.o.storage.checkpointer, point, fork.threadId, forkValues);
          }
        } catch (error) {
          await this.o.storage.sessions.delete(fork.id, source.scopes);
          throw error;
        }
        created = (await this.o.storage.sessions.get(fork.id, source.scopes)) ?? fork;
        const detail: StringMap = {
          forked_to: fork.id,
          checkpoint_id: point?.checkpoint.id ?? '',
        };
        return { session: source, detail };
      },
    });
    const fork = created as Session | null;
    if (!fork) throw new RuntimeError('INTERNAL_ERROR', 'fork produced no session');
    await this.pipeline.record(fork.id, fork, 'session.saved', 'fork', {
      versionAfter: fork.version,
      statusAfter: fork.status,
      detail: { forked_from: id },
    });
    return fork;
  }

  /**
   * The thread's head moves back to `point`: a new checkpoint equal to it (history is kept),
   * the message rows follow, the version increments. Refused while a run is active.
   */
  rewind(id: string, options: ThreadPoint & Versioned, scope: Scope): Promise<Session> {
    return this.pipeline.execute(id, scope, {
      name: 'rewind',
      expectedVersion: options.expectedVersion,
      apply: async (session) => {
        this.requireNotTerminal(session, 'rewind');
        await this.requireIdle(session);
        const point = await this.resolvePoint(session, options, scope);
        const head = await putCheckpointCopy(this.o.storage.checkpointer, point, session.threadId);
        return {
          session,
          detail: { to_checkpoint_id: point.checkpoint.id, checkpoint_id: head },
        };
      },
    });
  }

  /** Sets one metadata key (the others are kept). */
  setMetadata(id: string, key: string, value: string, options: Versioned, scope: Scope) {
    return this.pipeline.execute(id, scope, {
      name: 'set_metadata',
      expectedVersion: options.expectedVersion,
      apply: (session) =>
        Promise.resolve({
          session: { ...session, metadata: { ...session.metadata, [key]: value } },
          detail: { key },
        }),
    });
  }

  /** Removes one metadata key; NOT_FOUND when the session has no such key. */
  deleteMetadata(id: string, key: string, options: Versioned, scope: Scope) {
    return this.pipeline.execute(id, scope, {
      name: 'delete_metadata',
      expectedVersion: options.expectedVersion,
      apply: (session) => {
        if (!Object.hasOwn(session.metadata, key)) {
          throw new RuntimeError('NOT_FOUND', `Session ${id} has no metadata key "${key}"`);
        }
        const metadata = { ...session.metadata };
        delete metadata[key];
        return Promise.resolve({ session: { ...session, metadata }, detail: { key } });
      },
    });
  }

  async history(
    id: string,
    page: { limit: number; offset: number },
    scope: Scope,
  ): Promise<ThreadHistoryPage> {
    const session = await this.requireSession(id, scope);
    return threadHistory(this.o.storage.checkpointer, session.threadId, page);
  }

  activity(id: string, query: SessionActivityQuery, scope: Scope): Promise<SessionActivityPage> {
    return this.o.storage.activity.page(id, query, scope);
  }

  /** Rebuilds the message rows from the thread's latest checkpoint; returns the row count. */
  async rebuildMessages(id: string, scope: Scope): Promise<{ messages: number }> {
    await this.requireSession(id, scope);
    return this.o.storage.rebuildMessageProjection(id);
  }

  /**
   * The activity of the sessions `scope` sees (only `sessionId`'s when given) as it happens:
   * first the stored entries after `afterId` (when given), then live ones, each once, in id
   * order, until `signal` aborts.
   */
  async *watch(
    scope: Scope,
    options: { sessionId?: string | undefined; afterId?: number | undefined; signal?: AbortSignal },
  ): AsyncGenerator<SessionActivity, void, undefined> {
    const { sessionId, signal } = options;
    if (sessionId !== undefined) await this.requireSession(sessionId, scope);
    const buffered: SessionActivity[] = [];
    let wake: (() => void) | null = null;
    const stop = this.events.on('*', (event) => {
      if (event.id <= 0 || event.scopes === null) return;
      if (sessionId !== undefined && event.sessionId !== sessionId) return;
      if (!scopeMatches(scope, event.scopes)) return;
      const { scopes: _scopes, ...entry } = event;
      buffered.push(entry);
      wake?.();
    });
    const onAbort = () => wake?.();
    signal?.addEventListener('abort', onAbort);
    try {
      let last = options.afterId ?? Number.MAX_SAFE_INTEGER;
      if (options.afterId !== undefined) {
        for (;;) {
          const batch = await this.o.storage.activity.listAfter(
            last,
            REPLAY_BATCH,
            scope,
            sessionId,
          );
          for (const entry of batch) {
            last = entry.id;
            yield entry;
          }
          if (batch.length < REPLAY_BATCH) break;
        }
      } else {
        last = 0;
      }
      while (!signal?.aborted) {
        const entry = buffered.shift();
        if (entry) {
          if (entry.id > last || options.afterId === undefined) {
            last = Math.max(last, entry.id);
            yield entry;
          }
          continue;
        }
        await new Promise<void>((resolve) => {
          wake = resolve;
        });
        wake = null;
      }
    } finally {
      stop();
      signal?.removeEventListener('abort', onAbort);
    }
  }

  /** The input with an id and the workspace path of that id (when a root is configured). */
  private withWorkspace(input: CreateSessionInput): CreateSessionInput {
    const root = this.o.workspaceRoot;
    if (root === undefined || input.workspacePath != null) return input;
    const id = input.id ?? randomUUID();
    return { ...input, id, workspacePath: join(root, id) };
  }

  /**
   * Applies the session's checkpoint retention (its own, else the server's) to its thread, in
   * bounded batches; returns how many checkpoints were deleted. A session with an active run is
   * skipped (its run is writing the thread). Never deletes the head or a message row.
   */
  async pruneCheckpoints(sessionId: string): Promise<number> {
    const session = await this.o.storage.sessions.get(sessionId, {});
    if (!session) return 0;
    const policy = parseRetention(this.retentionOf(session));
    if (!policy || policy.kind === 'all') return 0;
    if (await this.o.storage.runs.getActive(session.id)) return 0;
    let total = 0;
    for (;;) {
      const deleted = await pruneThread(this.o.storage.checkpoints, session.threadId, policy, {
        batch: PRUNE_BATCH,
      });
      total += deleted;
      if (deleted < PRUNE_BATCH) return total;
    }
  }

  private retentionOf(session: Session): string {
    return session.checkpointRetention ?? this.o.checkpointRetention ?? 'all';
  }

  private async transition(
    id: string,
    action: 'resume' | 'complete' | 'fail',
    options: Versioned,
    scope: Scope,
    from: Session['status'][],
    to: Session['status'],
    detail: StringMap = {},
  ): Promise<Session> {
    return this.pipeline.execute(id, scope, {
      name: action,
      expectedVersion: options.expectedVersion,
      apply: (session) => {
        this.requireStatus(session, action, from);
        return Promise.resolve({
          session: { ...session, status: to, endedAt: TERMINAL.has(to) ? new Date() : null },
          detail,
        });
      },
    });
  }

  private requireStatus(session: Session, action: string, from: Session['status'][]): void {
    if (!from.includes(session.status)) {
      throw new RuntimeError(
        'CONFLICT',
        `Cannot ${action} session ${session.id}: it is ${session.status} (${action} applies to ${from.join(' or ')} sessions)`,
      );
    }
  }

  private requireNotTerminal(session: Session, action: string): void {
    if (TERMINAL.has(session.status)) {
      throw new RuntimeError(
        'CONFLICT',
        `Cannot ${action} session ${session.id}: it is ${session.status}`,
      );
    }
  }

  private async requireIdle(session: Session): Promise<void> {
    const active = await this.o.storage.runs.getActive(session.id);
    if (active) {
      throw new RuntimeError(
        'RUN_IN_PROGRESS',
        `A run is in progress on session ${session.id}: wait for its terminal event or abort it`,
      );
    }
  }

  private async requireSession(id: string, scope: Scope): Promise<Session> {
    const session = await this.o.storage.sessions.get(id, scope);
    if (!session) throw new RuntimeError('SESSION_NOT_FOUND', `Session not found: ${id}`);
    return session;
  }

  /**
   * The checkpoint of `point`: unknown checkpoint → NOT_FOUND; a message not in the session →
   * MESSAGE_NOT_FOUND; a message of the session no kept checkpoint holds (pruned by retention,
   * or not checkpointed yet) → CONFLICT.
   */
  private async resolvePoint(
    session: Session,
    point: ThreadPoint,
    scope: Scope,
  ): Promise<CheckpointTuple> {
    const { checkpointer } = this.o.storage;
    if ((point.checkpointId === undefined) === (point.messageId === undefined)) {
      throw RuntimeError.field('checkpointId', 'give exactly one of checkpointId and messageId');
    }
    if (point.checkpointId !== undefined) {
      const tuple = await rootCheckpoint(checkpointer, session.threadId, point.checkpointId);
      if (!tuple) {
        const kept = await this.o.storage.checkpoints.list(session.threadId);
        const oldest = kept[kept.length - 1]?.checkpointId;
        if (
          this.retentionOf(session) !== 'all' &&
          oldest !== undefined &&
          point.checkpointId < oldest
        ) {
          throw new RuntimeError(
            'CONFLICT',
            `Checkpoint ${point.checkpointId} of session ${session.id} was pruned by checkpoint retention (${this.retentionOf(session)}); the oldest kept is ${oldest}`,
          );
        }
        throw new RuntimeError(
          'NOT_FOUND',
          `Checkpoint not found in session ${session.id}: ${point.checkpointId} (unknown, or pruned by checkpoint retention)`,
        );
      }
      return tuple;
    }
    const messageId = point.messageId as string;
    const tuple = await checkpointWithMessage(checkpointer, session.threadId, messageId);
    if (tuple) return tuple;
    if (!(await this.o.storage.messages.get(session.id, messageId, scope))) {
      throw new RuntimeError(
        'MESSAGE_NOT_FOUND',
        `Message not found in session ${session.id}: ${messageId}`,
      );
    }
    throw new RuntimeError(
      'CONFLICT',
      `No kept checkpoint of session ${session.id} holds message ${messageId} (pruned by checkpoint retention, or not checkpointed yet)`,
    );
  }
}
