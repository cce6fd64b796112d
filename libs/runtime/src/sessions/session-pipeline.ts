import type {
  ErrorCode,
  NewSessionActivity,
  SessionActivity,
  Session,
  SessionAction,
  SessionEventType,
  StringMap,
  UpdateSessionInput,
} from '@cognition/contracts';
import type { Scope, StorageBackend } from '@cognition/storage';
import { RuntimeError } from '../errors';
import type { Logger } from '../logger';
import type { SessionEventBus } from './session-events';

/** The points of the pipeline where hooks run, in order. */
export type SessionHookPoint = 'afterLoad' | 'afterAction' | 'beforeSave' | 'afterSave';

export interface SessionHookContext {
  action: SessionAction;
  sessionId: string;
  /** The caller's scope. */
  scope: Scope;
}

/**
 * A hook: gets the session as the pipeline holds it at its point and may change it, by
 * returning a changed copy or by mutating it (the return value wins when given). Changes made
 * before the save are saved; `afterSave` hooks see the saved session (their changes are not
 * saved). A hook that throws before the save aborts the action (nothing saved).
 */
export type SessionHook = (
  session: Session,
  context: SessionHookContext,
) => Session | undefined | Promise<Session | undefined>;

/** What an action does to the loaded session. */
export interface SessionActionSpec {
  name: SessionAction;
  /** The write happens only if the stored version still equals it (409 otherwise). */
  expectedVersion?: number | undefined;
  /**
   * The change: returns the next state of the session (a draft the hooks may still change) and
   * details for the activity log. Side effects (abort a run, write a checkpoint) happen here.
   */
  apply(session: Session): Promise<{ session: Session; detail?: StringMap }>;
  /** false when the action writes nothing on this session (fork): no save, no version bump. */
  save?: boolean;
  /**
   * A side effect that must follow the save (suspend aborts the running run once the status
   * is stored, so nothing it triggers sees the old status); runs before the afterSave hooks.
   */
  afterSaved?: (saved: Session) => Promise<void>;
}

/** An event of one execution, persisted and emitted when the execution ends. */
interface Recorded {
  entry: NewSessionActivity;
  /** The session's scopes; null when it could not be loaded (not logged, only emitted). */
  scopes: StringMap | null;
}

/** Session fields an action may change (the rest is owned by the storage). */
const WRITABLE = [
  'title',
  'status',
  'agentName',
  'config',
  'metadata',
  'systemPrompt',
  'task',
  'endedAt',
  'expiresAt',
  'checkpointRetention',
] as const satisfies readonly (keyof Session & keyof UpdateSessionInput)[];

function codeOf(error: unknown): ErrorCode {
  const code = (error as { code?: unknown } | null)?.code;
  return typeof code === 'string' ? (code as ErrorCode) : 'INTERNAL_ERROR';
}

/** `abandoned` is a read-time status: the stored one is `active`. */
function stored(session: Session): Session {
  return session.status === 'abandoned' ? { ...session, status: 'active' } : session;
}

function isDate(value: unknown): value is Date {
  // Not `instanceof`: a Date from another realm (a VM context, a worker) is still a date.
  return Object.prototype.toString.call(value) === '[object Date]';
}

function same(a: unknown, b: unknown): boolean {
  if (isDate(a) || isDate(b)) return isDate(a) && isDate(b) && a.getTime() === b.getTime();
  return JSON.stringify(a) === JSON.stringify(b);
}

/** A copy hooks may mutate: the maps are copied, the rest is immutable values. */
function copyOf(session: Session): Session {
  return {
    ...session,
    config: { ...session.config },
    scopes: { ...session.scopes },
    metadata: { ...session.metadata },
  };
}

/**
 * Every write to a session goes through `execute` (Cognesy's `SessionRuntime.execute`):
 * load → afterLoad hooks → the action → afterAction hooks → beforeSave hooks → save with the
 * optimistic version check → afterSave hooks. Events: `session.loaded`,
 * `session.action_executed` (action, version and status before/after), `session.saved`,
 * `session.load_failed` and `session.save_failed` (with the error code). When the execution
 * ends (saved, or failed at any point), its events are appended to the session's activity log
 * in one write (when the session exists), then given in order, with their ids, to the
 * in-process listeners. A failed save rethrows the original typed error after its event.
 */
export class SessionPipeline {
  private readonly hooks = new Map<
    SessionHookPoint,
    { hook: SessionHook; priority: number; order: number }[]
  >();
  private registered = 0;

  constructor(
    private readonly storage: StorageBackend,
    private readonly bus: SessionEventBus,
    private readonly logger: Logger,
  ) {}

  /** Registers a hook; higher `priority` runs first (equal: registration order). */
  hook(
    point: SessionHookPoint,
    hook: SessionHook,
    options: { priority?: number } = {},
  ): () => void {
    const entry = { hook, priority: options.priority ?? 0, order: (this.registered += 1) };
    const list = this.hooks.get(point) ?? [];
    list.push(entry);
    list.sort((a, b) => b.priority - a.priority || a.order - b.order);
    this.hooks.set(point, list);
    return () => {
      const current = this.hooks.get(point) ?? [];
      this.hooks.set(
        point,
        current.filter((e) => e !== entry),
      );
    };
  }

  async execute(sessionId: string, scope: Scope, spec: SessionActionSpec): Promise<Session> {
    const batch: Recorded[] = [];
    try {
      return await this.run(sessionId, scope, spec, batch);
    } finally {
      await this.flush(batch);
    }
  }

  private async run(
    sessionId: string,
    scope: Scope,
    spec: SessionActionSpec,
    batch: Recorded[],
  ): Promise<Session> {
    const context: SessionHookContext = { action: spec.name, sessionId, scope };
    let loaded: Session | null;
    try {
      loaded = await this.storage.sessions.get(sessionId, scope);
    } catch (error) {
      this.add(batch, sessionId, null, 'session.load_failed', spec.name, {
        errorCode: codeOf(error),
      });
      throw error;
    }
    if (!loaded) {
      this.add(batch, sessionId, null, 'session.load_failed', spec.name, {
        errorCode: 'SESSION_NOT_FOUND',
      });
      throw new RuntimeError('SESSION_NOT_FOUND', `Session not found: ${sessionId}`);
    }
    const before = loaded;
    const base = {
      versionBefore: before.version,
      statusBefore: before.status,
    };
    this.add(batch, sessionId, before, 'session.loaded', spec.name, {
      ...base,
      versionAfter: before.version,
      statusAfter: before.status,
    });
    if (spec.expectedVersion !== undefined && spec.expectedVersion !== before.version) {
      const error = new RuntimeError(
        'VERSION_CONFLICT',
        `Session ${sessionId} is at version ${before.version}, not ${spec.expectedVersion}`,
      );
      this.add(batch, sessionId, before, 'session.save_failed', spec.name, {
        ...base,
        errorCode: error.code,
      });
      throw error;
    }
    let draft = await this.runHooks('afterLoad', stored(copyOf(before)), context);
    const applied = await spec.apply(draft);
    draft = await this.runHooks('afterAction', applied.session, context);
    const detail = applied.detail ?? {};
    const saves = spec.save !== false;
    this.add(batch, sessionId, before, 'session.action_executed', spec.name, {
      ...base,
      versionAfter: saves ? before.version + 1 : before.version,
      statusAfter: draft.status,
      detail,
    });
    if (!saves) return draft;
    draft = await this.runHooks('beforeSave', draft, context);
    const changes: UpdateSessionInput = {};
    const target = changes as Record<string, unknown>;
    const original = stored(before);
    for (const field of WRITABLE) {
      if (!same(draft[field], original[field])) target[field] = draft[field];
    }
    let saved: Session;
    try {
      saved = await this.storage.sessions.update(
        sessionId,
        { ...changes, expectedVersion: before.version },
        scope,
      );
    } catch (error) {
      this.add(batch, sessionId, before, 'session.save_failed', spec.name, {
        ...base,
        errorCode: codeOf(error),
        detail,
      });
      throw error;
    }
    this.add(batch, sessionId, saved, 'session.saved', spec.name, {
      ...base,
      versionAfter: saved.version,
      statusAfter: saved.status,
      detail,
    });
    await spec.afterSaved?.(saved);
    try {
      await this.runHooks('afterSave', copyOf(saved), context);
    } catch (error) {
      // The write happened: the caller gets the saved session, the hook failure is logged.
      this.logger.error({ err: error, sessionId, action: spec.name }, 'afterSave hook failed');
    }
    return saved;
  }

  /** Records one event outside an action (create, the new session of a fork) at once. */
  async record(
    sessionId: string,
    session: Session | null,
    type: SessionEventType,
    action: SessionAction | null,
    fields: Partial<Omit<NewSessionActivity, 'sessionId' | 'type' | 'action'>>,
  ): Promise<void> {
    const batch: Recorded[] = [];
    this.add(batch, sessionId, session, type, action, fields);
    await this.flush(batch);
  }

  private add(
    batch: Recorded[],
    sessionId: string,
    session: Session | null,
    type: SessionEventType,
    action: SessionAction | null,
    fields: Partial<Omit<NewSessionActivity, 'sessionId' | 'type' | 'action'>>,
  ): void {
    batch.push({
      entry: {
        sessionId,
        type,
        action,
        versionBefore: fields.versionBefore ?? null,
        versionAfter: fields.versionAfter ?? null,
        statusBefore: fields.statusBefore ?? null,
        statusAfter: fields.statusAfter ?? null,
        errorCode: fields.errorCode ?? null,
        detail: fields.detail ?? {},
      },
      // A session the caller could not load gets no log entry (it may not exist, or belong to
      // another tenant); in-process listeners still hear of the failure.
      scopes: session?.scopes ?? null,
    });
  }

  /**
   * Persists the batch's entries in one write (the log is a record of what happened, not part
   * of it: a failed append is logged and the entries go without ids), then gives every event,
   * in order, to the listeners.
   */
  private async flush(batch: readonly Recorded[]): Promise<void> {
    const logged = batch.filter((item) => item.scopes !== null).map((item) => item.entry);
    let persisted: SessionActivity[] = [];
    if (logged.length > 0) {
      try {
        persisted = await this.storage.activity.appendMany(logged);
      } catch (error) {
        this.logger.warn(
          { err: error, sessionId: logged[0]?.sessionId },
          'could not append session activity',
        );
      }
    }
    let next = 0;
    for (const item of batch) {
      const stored =
        item.scopes !== null && persisted.length === logged.length ? persisted[next++] : undefined;
      this.bus.emit({
        ...(stored ?? { ...item.entry, id: 0, createdAt: new Date() }),
        scopes: item.scopes,
      });
    }
  }

  private async runHooks(
    point: SessionHookPoint,
    session: Session,
    context: SessionHookContext,
  ): Promise<Session> {
    let current = session;
    for (const { hook } of this.hooks.get(point) ?? []) {
      current = (await hook(current, context)) ?? current;
    }
    return current;
  }
}
