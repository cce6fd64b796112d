import type {
  Message,
  MultitaskStrategy,
  PendingRunInput,
  Run,
  Session,
} from '@cognition/contracts';
import {
  IdSchema,
  MAX_PENDING_RUNS,
  MESSAGE_CONTENT_MAX,
  MultitaskStrategySchema,
  StringMapSchema,
  toFieldIssues,
} from '@cognition/contracts';
import type { Scope, StorageBackend } from '@cognition/storage';
import { z } from 'zod';
import { RuntimeError } from '../errors';
import { newMessageId, newRunId } from '../ids';
import type { Logger } from '../logger';
import { refuseNonPublicHost } from '../net/public-address';
import type { ActiveRuns } from './active-runs';
import type { RunControlChannel } from './ports';
import type { RunExecutor } from './run-executor';
import { executeInBackground } from './run-executor';
import type { RunLeases } from './run-leases';
import type { ConfigRegistry } from '../registry/config-registry';
import { missingAgent } from '../registry/config-registry';
import type { RegistrySnapshot } from '../registry/config-registry';

/** Input of `send`. `scope` is the caller's scope (from auth), never from the request body. */
export interface SendInput {
  sessionId: string;
  scope: Scope;
  content: string;
  /** A message of the same session this one answers (threading); null/absent: none. */
  parentId?: string | null;
  metadata?: Record<string, string>;
  /** http(s) URL POSTed the completion payload when the run ends. */
  callbackUrl?: string | null;
  /** A retried send with the same key returns the first run instead of starting another. */
  idempotencyKey?: string | null;
  /** What to do when the session has an active run (default `reject`). */
  multitaskStrategy?: MultitaskStrategy;
}

export interface SendResult {
  /** The new run: `pending` when it waits behind the session's active run. */
  run: Run;
  /**
   * The user message (for a replayed idempotency key: the first one). For a `pending` run, the
   * message as it enters the history when the run starts, with the id it will have.
   */
  message: Message;
  /** false when the idempotency key matched an earlier run. */
  created: boolean;
}

const SendInputSchema = z.strictObject({
  sessionId: IdSchema,
  scope: StringMapSchema,
  content: z.string().min(1).max(MESSAGE_CONTENT_MAX),
  parentId: IdSchema.nullable().optional(),
  metadata: StringMapSchema.optional(),
  callbackUrl: z
    .url({ protocol: /^https?$/, error: 'must be an http or https URL' })
    .max(2048)
    .nullable()
    .optional(),
  idempotencyKey: z.string().min(1).max(256).nullable().optional(),
  multitaskStrategy: MultitaskStrategySchema.optional(),
});
type ParsedSend = z.output<typeof SendInputSchema>;

const NOT_ACCEPTING: readonly Session['status'][] = ['suspended', 'completed', 'failed'];

export interface RunSchedulerOptions {
  storage: StorageBackend;
  active: ActiveRuns;
  executor: Pick<RunExecutor, 'execute'>;
  control: RunControlChannel;
  /** Claims a run for this node before it executes here (or leaves it to a node with a slot). */
  leases: Pick<RunLeases, 'claim' | 'deferStart' | 'initialClaim'>;
  logger: Logger;
  /** Whether callbacks may target loopback/private addresses. */
  allowPrivateCallbacks: boolean;
  /** The agents in force: a send to a session whose agent was deleted is refused. */
  registry: Pick<ConfigRegistry, 'current'>;
}

/** The session of `sessionId` within `scope`, or SESSION_NOT_FOUND. */
export async function requireSession(
  storage: StorageBackend,
  sessionId: string,
  scope: Scope,
): Promise<Session> {
  const session = await storage.sessions.get(sessionId, scope);
  if (!session) throw new RuntimeError('SESSION_NOT_FOUND', `Session not found: ${sessionId}`);
  return session;
}

/**
 * Admission of sends: validates, persists the user message, creates the run and starts its
 * execution in the background. Sends of one session are serialised in-process so a losing
 * concurrent send never persists a user message no run answers (storage still arbitrates
 * between nodes through its one-active-run rule).
 */
export class RunScheduler {
  private readonly sendLocks = new Map<string, Promise<void>>();
  private accepting = true;

  constructor(private readonly o: RunSchedulerOptions) {}

  /** Refuses every later send with UNAVAILABLE (shutdown). */
  stopAccepting(): void {
    this.accepting = false;
  }

  /**
   * @throws RuntimeError VALIDATION_ERROR (field named), SESSION_NOT_FOUND, CONFLICT (session
   *   does not accept messages), UNAVAILABLE (shutting down); RUN_IN_PROGRESS when the session
   *   already has an active run.
   */
  async send(input: SendInput): Promise<SendResult> {
    const parsed = SendInputSchema.safeParse(input);
    if (!parsed.success) {
      const issues = toFieldIssues(parsed.error);
      throw new RuntimeError(
        'VALIDATION_ERROR',
        `Invalid message: ${issues.map((i) => `${i.path}: ${i.message}`).join('; ')}`,
        { issues },
      );
    }
    if (!this.accepting) throw new RuntimeError('UNAVAILABLE', 'The server is shutting down');
    return this.withSessionLock(parsed.data.sessionId, () => this.sendLocked(parsed.data));
  }

  private async withSessionLock<T>(sessionId: string, fn: () => Promise<T>): Promise<T> {
    const previous = this.sendLocks.get(sessionId) ?? Promise.resolve();
    const current = previous.then(fn, fn);
    const settled = current.then(
      () => undefined,
      () => undefined,
    );
    this.sendLocks.set(sessionId, settled);
    try {
      return await current;
    } finally {
      if (this.sendLocks.get(sessionId) === settled) this.sendLocks.delete(sessionId);
    }
  }

  private async sendLocked(input: ParsedSend): Promise<SendResult> {
    const { storage } = this.o;
    const { sessionId, scope, content, callbackUrl, idempotencyKey } = input;
    const session = await requireSession(storage, sessionId, scope);
    if (idempotencyKey) {
      const replayed = await this.findByIdempotencyKey(session.id, idempotencyKey, scope);
      if (replayed) return replayed;
    }
    if (NOT_ACCEPTING.includes(session.status)) {
      throw new RuntimeError(
        'CONFLICT',
        `Session ${session.id} is ${session.status} and accepts no messages`,
      );
    }
    // Refused before anything is stored: the run could only fail (its agent was deleted).
    const registry = await this.o.registry.current();
    if (!registry.agents.get(session.agentName)) throw missingAgent(session.agentName);
    const parentId = input.parentId ?? null;
    if (parentId !== null && !(await storage.messages.get(session.id, parentId, scope))) {
      throw RuntimeError.field('parentId', `no message ${parentId} in this session`);
    }
    if (callbackUrl && !this.o.allowPrivateCallbacks) {
      // Refused here, where the caller can still be told; delivery checks again (DNS changes).
      // A host that does not resolve now is accepted: that may pass, and delivery retries.
      const refused = await refuseNonPublicHost(new URL(callbackUrl));
      if (refused?.kind === 'non-public') {
        throw RuntimeError.field(
          'callbackUrl',
          `${refused.message}; callbacks into the server's own network are not allowed by its configuration`,
        );
      }
    }
    const parsedMetadata = input.metadata ?? {};
    const active = await storage.runs.getActive(session.id);
    const waiting = await storage.runs.listPending(session.id);
    if (active || waiting.length > 0) {
      return this.sendWhileBusy(input, session, active, waiting.length);
    }
    // The run first: its creation is what the database arbitrates (one active run per session,
    // across nodes), so a losing send stores nothing. It carries its message, which the next
    // process inserts should this one die before it does.
    const runInput = {
      messageId: newMessageId(),
      content,
      parentId,
      metadata: parsedMetadata,
    };
    const { run, created } = await storage.runs.create({
      id: newRunId(),
      sessionId: session.id,
      status: 'queued',
      inputMessageId: runInput.messageId,
      idempotencyKey: idempotencyKey ?? null,
      callbackUrl: callbackUrl ?? null,
      pendingInput: runInput,
      ...this.o.leases.initialClaim(),
    });
    if (!created) {
      const first = run.inputMessageId
        ? await storage.messages.get(session.id, run.inputMessageId, scope)
        : null;
      return { run, message: first ?? pendingMessage(run, runInput), created: false };
    }
    let message: Message;
    try {
      message = await storage.messages.create({
        id: runInput.messageId,
        sessionId: session.id,
        role: 'user',
        content,
        parentId,
        metadata: runInput.metadata,
      });
    } catch (error) {
      await storage.runs
        .update(run.id, {
          status: 'failed',
          error: { code: 'UNAVAILABLE', message: 'The message could not be stored' },
          finishedAt: new Date(),
        })
        .catch(() => undefined);
      throw error;
    }
    await this.start(run, session, message, scope, registry);
    return { run, message, created: true };
  }

  /**
   * Double-texting: the session has an active run (or runs already waiting behind it). The
   * message becomes a `pending` run at once (durable: it survives a restart), then `interrupt`
   * and `rollback` cancel the active run, whose finisher starts the next pending run.
   */
  private async sendWhileBusy(
    input: ParsedSend,
    session: Session,
    active: Run | null,
    waiting: number,
  ): Promise<SendResult> {
    const strategy = input.multitaskStrategy ?? 'reject';
    if (active?.status === 'requires_action') {
      // Whatever the strategy: the paused run's tool calls need an answer before the thread
      // can take another message.
      throw new RuntimeError(
        'RUN_IN_PROGRESS',
        `Session ${session.id} has run ${active.id} waiting for a decision on its tool calls: resume it (POST /sessions/${session.id}/runs/${active.id}/resume) or abort it`,
      );
    }
    if (strategy === 'reject') {
      throw new RuntimeError(
        'RUN_IN_PROGRESS',
        active
          ? `Session ${session.id} already has an active run (${active.id})`
          : `Session ${session.id} has runs waiting to start`,
      );
    }
    if (waiting >= MAX_PENDING_RUNS) {
      throw new RuntimeError(
        'RUN_IN_PROGRESS',
        `Session ${session.id} already has ${waiting} runs waiting (the limit): wait for them or abort`,
      );
    }
    const pendingInput = {
      messageId: newMessageId(),
      content: input.content,
      parentId: input.parentId ?? null,
      metadata: input.metadata ?? {},
    };
    const { run, created } = await this.o.storage.runs.create({
      id: newRunId(),
      sessionId: session.id,
      status: 'pending',
      multitaskStrategy: strategy,
      supersedesRunId: active?.id ?? null,
      callbackUrl: input.callbackUrl ?? null,
      idempotencyKey: input.idempotencyKey ?? null,
      pendingInput,
    });
    const message = pendingMessage(run, pendingInput);
    if (created && active && strategy !== 'enqueue') {
      await this.o.control.cancel(
        active.id,
        strategy === 'interrupt' ? 'superseded' : 'rolled_back',
      );
    }
    return { run, message, created };
  }

  /**
   * Starts the session's oldest pending run when no run of the session is active: called when a
   * run finishes, and by recovery. Its message enters the history now. Never throws (logged).
   */
  async startNext(sessionId: string): Promise<void> {
    if (!this.accepting) return;
    try {
      await this.withSessionLock(sessionId, () => this.startNextLocked(sessionId));
    } catch (error) {
      this.o.logger.error({ err: error, sessionId }, 'could not start the next pending run');
    }
  }

  private async startNextLocked(sessionId: string): Promise<void> {
    const { storage } = this.o;
    if (!this.accepting || (await storage.runs.getActive(sessionId))) return;
    const next = (await storage.runs.listPending(sessionId))[0];
    if (!next) return;
    // A suspended or ended session starts nothing: its pending runs wait (resume starts them).
    const current = await storage.sessions.get(sessionId, {});
    if (!current || NOT_ACCEPTING.includes(current.status)) return;
    const run = await storage.runs.promote(next.id);
    const session = await storage.sessions.get(sessionId, {});
    const message = session ? await ensureInputMessage(storage, run) : null;
    if (!session || !message) return;
    await this.start(run, session, message, {});
  }

  /**
   * Executes the run here once this node holds its claim (with several nodes, another one may
   * have claimed it first: it executes it then, and its events reach this node's streams). A
   * cluster node without a free slot leaves the run queued for a node that has one.
   */
  private async start(
    run: Run,
    session: Session,
    message: Message,
    scope: Scope,
    registry?: RegistrySnapshot,
  ): Promise<void> {
    if (this.o.leases.deferStart()) return;
    if (!(await this.o.leases.claim(run.id))) return;
    const active = this.o.active.add(run.id, session.id, scope);
    executeInBackground(
      this.o.executor,
      active,
      {
        session,
        userMessage: message,
        callbackUrl: run.callbackUrl,
        ...(registry ? { fresh: { registry } } : {}),
      },
      { runs: this.o.active, logger: this.o.logger, what: 'run' },
    );
  }

  private async findByIdempotencyKey(
    sessionId: string,
    key: string,
    scope: Scope,
  ): Promise<SendResult | null> {
    const { storage } = this.o;
    const run = (await storage.runs.list(sessionId)).find((r) => r.idempotencyKey === key);
    if (!run) return null;
    const input = run.status === 'pending' ? await storage.runs.pendingInput(run.id) : null;
    const message = input
      ? pendingMessage(run, input)
      : run.inputMessageId
        ? await storage.messages.get(sessionId, run.inputMessageId, scope)
        : null;
    if (!message) return null;
    return { run, message, created: false };
  }
}

/**
 * The user message of a run started from `pending`: inserted with the id its pending input
 * carries, unless an earlier process inserted it before dying (then that one).
 */
export async function ensureInputMessage(
  storage: StorageBackend,
  run: Run,
): Promise<Message | null> {
  const input = await storage.runs.pendingInput(run.id);
  const id = run.inputMessageId ?? input?.messageId;
  if (!id) return null;
  const existing = await storage.messages.get(run.sessionId, id, {});
  if (existing || !input) return existing;
  return storage.messages.create({
    id: input.messageId,
    sessionId: run.sessionId,
    role: 'user',
    content: input.content,
    parentId: input.parentId,
    metadata: input.metadata,
  });
}

/** The message a pending run will send, as it will read once in the history. */
function pendingMessage(run: Run, input: PendingRunInput): Message {
  return {
    id: input.messageId,
    sessionId: run.sessionId,
    role: 'user',
    content: input.content,
    toolCalls: [],
    toolCallId: null,
    tokenCount: null,
    modelUsed: null,
    parentId: input.parentId,
    metadata: input.metadata,
    createdAt: run.createdAt,
  };
}
