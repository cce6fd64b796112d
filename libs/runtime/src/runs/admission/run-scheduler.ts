import type {
  CallbackConfig,
  ClientTool,
  Message,
  MultitaskStrategy,
  Run,
  Session,
} from '@cognition/contracts';
import { SendMessageFieldsSchema } from '@cognition/contracts';
import type { Scope, StorageBackend } from '@cognition/storage';
import { RuntimeError } from '../../errors';
import { newMessageId, newRunId } from '../../ids';
import type { Logger } from '../../logger';
import type { ConfigRegistry } from '../../registry/config-registry';
import { missingAgent } from '../../registry/config-registry';
import type { ActiveRuns } from '../coordination/active-runs';
import type { RunControlChannel } from '../coordination/ports';
import type { RunLeases } from '../coordination/run-leases';
import type { RunExecutor, RunInput } from '../execution/run-executor';
import { executeInBackground } from '../execution/run-executor';
import { requireSession } from '../run-context';
import type {
  FiringOutcome,
  FiringSend,
  GraphSendInput,
  ParsedSend,
  SendInput,
  SendOptions,
  SendResult,
} from './send-input';
import { parseSendInput } from './send-input';
import { inputOfRun, pendingMessage, replayedSend } from './user-message';
import { DelayedStarts, isDue } from './delayed-starts';
import { SessionLocks } from './session-locks';
import { admitFirings } from './firing-admission';
import {
  NOT_ACCEPTING,
  busyStrategy,
  checkCallbackHost,
  refuseClosed,
  runInProgress,
} from './refusals';

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

/**
 * Admission of sends: validates, persists the user message, creates the run and starts its
 * execution in the background. Sends of one session are serialised in-process so a losing
 * concurrent send never persists a user message no run answers (storage still arbitrates
 * between nodes through its one-active-run rule).
 */
export class RunScheduler {
  private readonly locks = new SessionLocks();
  private accepting = true;
  private readonly delayed = new DelayedStarts((sessionId) => void this.startNext(sessionId));

  constructor(private readonly o: RunSchedulerOptions) {}

  /** Refuses every later send with UNAVAILABLE (shutdown). */
  stopAccepting(): void {
    this.accepting = false;
    this.delayed.stop();
  }

  /**
   * @throws RuntimeError VALIDATION_ERROR (field named), SESSION_NOT_FOUND, CONFLICT (session
   *   does not accept messages), UNAVAILABLE (shutting down); RUN_IN_PROGRESS when the session
   *   cannot take the message now, worded for the caller (see `runInProgress`).
   */
  async send(input: SendInput, options: SendOptions = {}): Promise<SendResult> {
    const parsed = parseSendInput(input);
    if (!this.accepting) throw new RuntimeError('UNAVAILABLE', 'The server is shutting down');
    const fresh = options.newSession?.id === parsed.sessionId ? options.newSession : undefined;
    return this.locks.run(parsed.sessionId, () => this.sendLocked(parsed, fresh));
  }

  /**
   * Admits a scheduler pass's `new_session` firings together, in one storage write
   * (`firing-admission.ts`); a refused firing gets its error.
   * @throws RuntimeError UNAVAILABLE (shutting down); a storage error fails the whole batch.
   */
  async admitFirings(firings: FiringSend[]): Promise<FiringOutcome[]> {
    if (!this.accepting) throw new RuntimeError('UNAVAILABLE', 'The server is shutting down');
    return admitFirings(firings, {
      storage: this.o.storage,
      registry: this.o.registry,
      checkCallbackHost: (url) => checkCallbackHost(url, this.o.allowPrivateCallbacks),
      start: (run, input, scope) => this.start(run, input, scope),
    });
  }

  /**
   * Sets (or, with null, removes) where a run's completion payload goes and how (`config`),
   * while the run has not ended (A2A's push notification configs). The URL is checked as a
   * send's `callbackUrl`.
   * @throws RuntimeError SESSION_NOT_FOUND, RUN_NOT_FOUND, CONFLICT (the run has ended),
   *   VALIDATION_ERROR naming `callbackUrl`.
   */
  async setCallback(
    sessionId: string,
    runId: string,
    callbackUrl: string | null,
    scope: Scope,
    config: CallbackConfig | null = null,
  ): Promise<Run> {
    const { storage } = this.o;
    const session = await requireSession(storage, sessionId, scope);
    const run = await storage.runs.get(runId);
    if (!run || run.sessionId !== session.id) {
      throw new RuntimeError('RUN_NOT_FOUND', `Run not found: ${runId}`);
    }
    if (callbackUrl !== null) {
      const parsed = SendMessageFieldsSchema.shape.callbackUrl.safeParse(callbackUrl);
      if (!parsed.success) {
        throw RuntimeError.field('callbackUrl', parsed.error.issues[0]?.message ?? 'invalid');
      }
      await checkCallbackHost(callbackUrl, this.o.allowPrivateCallbacks);
    }
    if (run.finishedAt !== null) {
      throw new RuntimeError('CONFLICT', `Run ${run.id} has ended (${run.status})`);
    }
    return storage.runs.update(run.id, {
      callbackUrl,
      callbackConfig: callbackUrl === null ? null : config,
    });
  }

  /** `fresh`: the session the caller just created (see `SendOptions.newSession`). */
  private async sendLocked(input: ParsedSend, fresh?: Session): Promise<SendResult> {
    const { storage } = this.o;
    const { sessionId, scope, content, callbackUrl, idempotencyKey } = input;
    const session = fresh ?? (await requireSession(storage, sessionId, scope));
    if (idempotencyKey && !fresh) {
      const replayed = await replayedSend(storage, session.id, idempotencyKey, scope);
      if (replayed) return replayed;
    }
    refuseClosed(session);
    // Refused before anything is stored: the run could only fail (its agent was deleted).
    const registry = await this.o.registry.current();
    if (!registry.agents.get(session.agentName)) throw missingAgent(session.agentName);
    const parentId = input.parentId ?? null;
    if (parentId !== null && !(await storage.messages.get(session.id, parentId, scope))) {
      throw RuntimeError.field('parentId', `no message ${parentId} in this session`);
    }
    if (callbackUrl) await checkCallbackHost(callbackUrl, this.o.allowPrivateCallbacks);
    const parsedMetadata = input.metadata ?? {};
    const { active, pending } = fresh
      ? { active: null, pending: [] }
      : await storage.runs.getActiveAndPending(session.id);
    // A delayed run not due yet holds nothing back.
    const waiting = pending.filter((run) => isDue(run, new Date()));
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
      ...clientToolsOf(input),
    };
    const { run, created } = await storage.runs
      .create({
        id: newRunId(),
        sessionId: session.id,
        status: 'queued',
        inputMessageId: runInput.messageId,
        idempotencyKey: idempotencyKey ?? null,
        callbackUrl: callbackUrl ?? null,
        callbackConfig: callbackUrl ? (input.callbackConfig ?? null) : null,
        pendingInput: runInput,
        ...this.o.leases.initialClaim(),
      })
      .catch((error: unknown) => {
        // Another send (of any node) won the session's one active run.
        throw (error as { code?: unknown }).code === 'RUN_IN_PROGRESS'
          ? runInProgress(session.id, error)
          : error;
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
    await this.start(
      run,
      {
        session,
        userMessage: message,
        callbackUrl: run.callbackUrl,
        fresh: { registry, clientTools: runInput.clientTools ?? [] },
      },
      scope,
    );
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
    const strategy = busyStrategy(input.multitaskStrategy, session, active, waiting);
    const pendingInput = {
      messageId: newMessageId(),
      content: input.content,
      parentId: input.parentId ?? null,
      metadata: input.metadata ?? {},
      ...clientToolsOf(input),
    };
    const { run, created } = await this.o.storage.runs.create({
      id: newRunId(),
      sessionId: session.id,
      status: 'pending',
      multitaskStrategy: strategy,
      supersedesRunId: active?.id ?? null,
      callbackUrl: input.callbackUrl ?? null,
      callbackConfig: input.callbackUrl ? (input.callbackConfig ?? null) : null,
      idempotencyKey: input.idempotencyKey ?? null,
      pendingInput,
    });
    const message = pendingMessage(run, pendingInput);
    if (created) await this.supersede(active, strategy);
    return { run, message, created };
  }

  /** `interrupt` and `rollback` cancel the active run; its finisher starts the next one. */
  private async supersede(active: Run | null, strategy: MultitaskStrategy): Promise<void> {
    if (!active || strategy === 'enqueue') return;
    await this.o.control.cancel(active.id, strategy === 'interrupt' ? 'superseded' : 'rolled_back');
  }

  /**
   * Admits a run of a `langgraph.json` graph: the admission of a send (session lock and
   * status, the multitask strategy, the database's one active run, the lease, the start), with
   * the graph's kwargs, stored with the run, for input instead of a user message.
   * @throws RuntimeError as `send` does.
   */
  async sendGraph(input: GraphSendInput): Promise<{ run: Run; created: boolean }> {
    if (!this.accepting) throw new RuntimeError('UNAVAILABLE', 'The server is shutting down');
    return this.locks.run(input.sessionId, async () => {
      const { storage } = this.o;
      const session = await requireSession(storage, input.sessionId, input.scope);
      if (input.idempotencyKey) {
        const key = input.idempotencyKey;
        const replayed = (await storage.runs.list(session.id)).find(
          (r) => r.idempotencyKey === key,
        );
        if (replayed) return { run: replayed, created: false };
      }
      refuseClosed(session);
      if (input.callbackUrl) {
        await checkCallbackHost(input.callbackUrl, this.o.allowPrivateCallbacks);
      }
      const { active, pending } = await storage.runs.getActiveAndPending(session.id);
      // A delayed run not due yet holds nothing back.
      const waiting = pending.filter((run) => isDue(run, new Date())).length;
      const fields = {
        id: newRunId(),
        sessionId: session.id,
        callbackUrl: input.callbackUrl ?? null,
        idempotencyKey: input.idempotencyKey ?? null,
        kwargs: input.kwargs,
      };
      if (active || waiting > 0) {
        const strategy = busyStrategy(input.multitaskStrategy, session, active, waiting);
        const { run, created } = await storage.runs.create({
          ...fields,
          status: 'pending',
          multitaskStrategy: strategy,
          supersedesRunId: active?.id ?? null,
          startAfter: input.startAfter ?? null,
        });
        if (created) await this.supersede(active, strategy);
        return { run, created };
      }
      if (input.startAfter) {
        const { run, created } = await storage.runs.create({
          ...fields,
          status: 'pending',
          startAfter: input.startAfter,
        });
        if (created) this.delayed.wake(session.id, [run]);
        return { run, created };
      }
      const { run, created } = await storage.runs
        .create({ ...fields, status: 'queued', ...this.o.leases.initialClaim() })
        .catch((error: unknown) => {
          throw (error as { code?: unknown }).code === 'RUN_IN_PROGRESS'
            ? runInProgress(session.id, error)
            : error;
        });
      // Its idempotency key matched a run stored meanwhile: that run, not started again.
      if (!created) return { run, created: false };
      const start = { session, callbackUrl: run.callbackUrl, graph: input.kwargs };
      await this.start(run, start, input.scope);
      return { run, created: true };
    });
  }

  /**
   * Starts the session's oldest pending run when no run of the session is active: called when a
   * run finishes, and by recovery. Its message enters the history now. Never throws (logged).
   */
  async startNext(sessionId: string): Promise<void> {
    if (!this.accepting) return;
    try {
      await this.locks.run(sessionId, () => this.startNextLocked(sessionId));
    } catch (error) {
      this.o.logger.error({ err: error, sessionId }, 'could not start the next pending run');
    }
  }

  private async startNextLocked(sessionId: string): Promise<void> {
    const { storage } = this.o;
    if (!this.accepting) return;
    const { active, pending } = await storage.runs.getActiveAndPending(sessionId);
    if (active) return;
    const now = new Date();
    // The oldest run that is due: a delayed one waits for its time without holding others.
    const next = pending.find((run) => isDue(run, now));
    this.delayed.wake(
      sessionId,
      pending.filter((run) => !isDue(run, now)),
    );
    if (!next) return;
    // A suspended or ended session starts nothing: its pending runs wait (resume starts them).
    const current = await storage.sessions.get(sessionId, {});
    if (!current || NOT_ACCEPTING.includes(current.status)) return;
    const run = await storage.runs.promote(next.id);
    const session = await storage.sessions.get(sessionId, {});
    const input = session ? await inputOfRun(storage, run, session) : null;
    if (!session || !input) return;
    await this.start(run, input, {});
  }

  /**
   * Executes the run here once this node holds its claim (with several nodes, another one may
   * have claimed it first: it executes it then, and its events reach this node's streams). A
   * cluster node without a free slot leaves the run queued for a node that has one.
   */
  private async start(run: Run, input: RunInput, scope: Scope): Promise<void> {
    if (this.o.leases.deferStart()) return;
    const claim = await this.o.leases.claim(run.id);
    if (!claim) return;
    const active = this.o.active.add(run.id, input.session.id, scope, 0, claim.fence);
    executeInBackground(this.o.executor, active, input, {
      runs: this.o.active,
      logger: this.o.logger,
      what: 'run',
    });
  }
}

/** The run input's `clientTools` (absent when the send offered none). */
function clientToolsOf(input: ParsedSend): { clientTools?: ClientTool[] } {
  return input.clientTools?.length ? { clientTools: input.clientTools } : {};
}
