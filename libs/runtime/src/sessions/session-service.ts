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
import { putCheckpointCopy, rootCheckpoint, threadHistory } from '@cognition/storage';
import { RuntimeError } from '../errors';
import type { Logger } from '../logger';
import type { SessionEventListener } from './session-events';
import { SessionEventBus } from './session-events';
import type { SessionHook, SessionHookPoint } from './session-pipeline';
import { SessionPipeline } from './session-pipeline';
import { clearValues } from './thread-edits';
import { SessionThreads } from './session-threads';
import type { WatchOptions } from './session-watch';
import { watchActivity } from './session-watch';
import type { Versioned } from './session-status';
import { TERMINAL, requireNotTerminal, requireStatus } from './session-status';
import type { ForkOptions, RewindOptions, TimeTravelDeps } from './time-travel';
import { forkSession, rewindSession } from './time-travel';

export type { ThreadPoint } from './session-threads';

/** What the session actions need of the run machinery. */
export interface SessionRunControl {
  /** Cancels the session's active run (bounded wait); `run` null when it had none. */
  abort(sessionId: string, scope: Scope): Promise<{ run: { id: string } | null; aborted: boolean }>;
  /** Starts the session's oldest pending run (double-texting `enqueue`), if any; never throws. */
  startPending?(sessionId: string): Promise<void>;
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
  private readonly threads: SessionThreads;

  constructor(private readonly o: SessionServiceOptions) {
    this.events = new SessionEventBus((error) =>
      o.logger.error({ err: error }, 'session event listener failed'),
    );
    this.pipeline = new SessionPipeline(o.storage, this.events, o.logger);
    this.threads = new SessionThreads(o.storage, o.checkpointRetention);
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

  /**
   * active (or error) → suspended. The status is stored first, then the running run is aborted
   * (it ends `aborted`, its partial output kept), so runs queued behind it (`enqueue`) see a
   * suspended session and wait for resume.
   */
  suspend(id: string, options: Versioned, scope: Scope): Promise<Session> {
    return this.pipeline.execute(id, scope, {
      name: 'suspend',
      expectedVersion: options.expectedVersion,
      apply: async (session) => {
        requireStatus(session, 'suspend', ['active', 'error']);
        const active = await this.o.storage.runs.getActive(session.id);
        const detail: StringMap = active ? { aborted_run_id: active.id } : {};
        const next: Session = { ...session, status: 'suspended' };
        return { session: next, detail };
      },
      afterSaved: async () => {
        try {
          await this.o.runs.abort(id, scope);
        } catch (error) {
          this.o.logger.error(
            { err: error, sessionId: id },
            'could not abort the run of a suspended session',
          );
        }
      },
    });
  }

  /** suspended (or error) → active; runs queued meanwhile (`enqueue`) start in order. */
  async resume(id: string, options: Versioned, scope: Scope): Promise<Session> {
    const resumed = await this.transition(
      id,
      'resume',
      options,
      scope,
      ['suspended', 'error'],
      'active',
    );
    await this.o.runs.startPending?.(id);
    return resumed;
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
        requireNotTerminal(session, 'clear');
        await this.threads.requireIdle(session);
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

  /** A new session from the source's state at a point, or with its history (`time-travel.ts`). */
  fork(id: string, options: ForkOptions, scope: Scope): Promise<Session> {
    return forkSession(this.timeTravel(), id, options, scope);
  }

  /** The thread's head moves back to a point, or branches there (`time-travel.ts`). */
  rewind(id: string, options: RewindOptions, scope: Scope): Promise<Session> {
    return rewindSession(this.timeTravel(), id, options, scope);
  }

  /**
   * The status a run's outcome decided (`RunManager.useSessionStatusWriter`): `active` after a
   * completed run, `error` after a failed one, as the action `update` with detail
   * `{cause: 'run', run_id}`. Only an `active`/`error` session moves (a suspend or completion
   * that happened meanwhile wins); a concurrent write is retried once.
   */
  async applyRunOutcome(
    id: string,
    scope: Scope,
    status: 'active' | 'error',
    runId: string,
  ): Promise<void> {
    for (let attempt = 1; ; attempt += 1) {
      try {
        await this.pipeline.execute(id, scope, {
          name: 'update',
          apply: (session) => {
            requireStatus(session, 'apply a run outcome to', ['active', 'error']);
            const next: Session = { ...session, status };
            return Promise.resolve({ session: next, detail: { cause: 'run', run_id: runId } });
          },
        });
        return;
      } catch (error) {
        const code = (error as { code?: unknown }).code;
        if (code === 'VERSION_CONFLICT' && attempt < 2) continue;
        // Moved by someone else (suspended, completed, deleted): their decision stands.
        if (code === 'CONFLICT' || code === 'SESSION_NOT_FOUND') return;
        throw error;
      }
    }
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
    options: WatchOptions,
  ): AsyncGenerator<SessionActivity, void, undefined> {
    if (options.sessionId !== undefined) await this.requireSession(options.sessionId, scope);
    yield* watchActivity(this.events, this.o.storage, scope, options);
  }

  /** Applies checkpoint retention to the session's thread (see SessionThreads.prune). */
  pruneCheckpoints(sessionId: string): Promise<number> {
    return this.threads.prune(sessionId);
  }

  /** The input with an id and the workspace path of that id (when a root is configured). */
  private withWorkspace(input: CreateSessionInput): CreateSessionInput {
    const root = this.o.workspaceRoot;
    if (root === undefined || input.workspacePath != null) return input;
    const id = input.id ?? randomUUID();
    return { ...input, id, workspacePath: join(root, id) };
  }

  private timeTravel(): TimeTravelDeps {
    return {
      storage: this.o.storage,
      pipeline: this.pipeline,
      threads: this.threads,
      withWorkspace: (input) => this.withWorkspace(input),
    };
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
        requireStatus(session, action, from);
        return Promise.resolve({
          session: { ...session, status: to, endedAt: TERMINAL.has(to) ? new Date() : null },
          detail,
        });
      },
    });
  }

  private async requireSession(id: string, scope: Scope): Promise<Session> {
    const session = await this.o.storage.sessions.get(id, scope);
    if (!session) throw new RuntimeError('SESSION_NOT_FOUND', `Session not found: ${id}`);
    return session;
  }
}
