import type {
  AgentEvent,
  CallbackConfig,
  ErrorCode,
  Message,
  PendingAction,
  RunStatus,
  Session,
  Usage,
} from '@cognition/contracts';
import { toWireMessage } from '@cognition/contracts';
import { setTimeout as sleep } from 'node:timers/promises';
import type { Scope, StorageBackend } from '@cognition/storage';
import { isRunFenced } from '@cognition/storage';
import type { CallbackDispatcher, CompletionPayload } from '../callbacks/callback-dispatcher';
import type { Logger } from '../logger';
import type { UsageMeter } from '../providers/usage';
import { combineUsage } from '../providers/usage';
import type { RunObserver } from '../telemetry/observer';
import { NOOP_RUN_OBSERVER } from '../telemetry/observer';
import type { Outcome } from '../run-outcome';
import type { ActiveRun } from './run-context';
import { ROLLED_BACK_MESSAGE } from './run-context';

/** What the executor hands over when a run ends. */
export interface RunEnding {
  outcome: Outcome;
  /** The run's usage so far (null when it never reached a model). */
  meter: UsageMeter | null;
  /** The id of the last assistant message the run checkpointed, if any. */
  lastAssistantId: string | null;
  callbackUrl: string | null;
  /**
   * What the run had used before this execution (it paused for a decision, then resumed):
   * added to `meter`'s figures. null: nothing before.
   */
  priorUsage?: Usage | null;
}

export const INTERRUPTED_MESSAGE = 'The server shut down during the run';
/** Reads of a run's answer for its `done` event before it is sent without it (~10 s in all). */
const FINAL_ASSISTANT_READS = 20;
const FINAL_ASSISTANT_RETRY_MS = 500;

/**
 * Ends a run: persists its status and the session status, then emits its usage and the one
 * terminal event (`done` with the projected assistant message, or `error`) in one flush of the
 * log (a paused run emits its usage first, as before its `interrupt`), and hands the
 * completion payload to the callback dispatcher. Never throws: storage failures are logged, and
 * the terminal event is emitted regardless so no stream waits forever.
 */
/**
 * Writes the session status a run's outcome decided (`active` after a completed run, `error`
 * after a failed one). The server routes it through the session pipeline (hooks, events,
 * activity log); without one the finisher updates storage directly.
 */
export type SessionStatusWriter = (
  sessionId: string,
  scope: Scope,
  status: 'active' | 'error',
  runId: string,
) => Promise<void>;

export class RunFinisher {
  /** Set by `RunManager.useSessionStatusWriter`; null: a direct storage update. */
  statusWriter: SessionStatusWriter | null = null;

  constructor(
    private readonly storage: StorageBackend,
    private readonly callbacks: Pick<CallbackDispatcher, 'dispatch'>,
    private readonly logger: Logger,
    /**
     * Called once the terminal event was handed to the log (the run is no longer active): the
     * session may start its next pending run.
     */
    private readonly onFinished: (run: ActiveRun) => void,
    private readonly observer: RunObserver = NOOP_RUN_OBSERVER,
  ) {}

  private handedOff = false;

  /**
   * From now on runs are left to the next process (graceful shutdown with recovery `resume`):
   * a run that ends here records nothing and emits no terminal event, so storage still lists
   * it active and the next process resumes it from its last checkpoint.
   */
  handOff(): void {
    this.handedOff = true;
  }

  async finish(active: ActiveRun, session: Session, ending: RunEnding): Promise<void> {
    const { emitter, runId, scope } = active;
    if (this.handedOff) {
      this.observer.runEnded({ runId, sessionId: session.id, outcome: 'handed_off' });
      this.onFinished(active);
      return;
    }
    const { outcome, meter } = ending;
    if (outcome.kind === 'lost') {
      // Another node owns the run now and finishes it: nothing of it is ours to record.
      this.onFinished(active);
      return;
    }
    if (outcome.kind === 'rolled_back') {
      await this.rollBack(active, outcome.message ?? ROLLED_BACK_MESSAGE);
      return;
    }
    const usage = combineUsage(
      ending.priorUsage ?? null,
      meter && meter.calls > 0 ? meter.toUsage() : null,
    );
    const usageEvent = usage && usageEventOf(usage, meter);
    if (outcome.kind === 'paused') {
      if (usageEvent) emitter.emit(usageEvent);
      await this.pause(active, session, outcome.action, usage);
      return;
    }
    const status: RunStatus = outcome.kind;
    const runError =
      outcome.kind === 'failed'
        ? { code: outcome.error.code as ErrorCode, message: outcome.error.message }
        : outcome.kind === 'interrupted'
          ? { code: 'UNAVAILABLE' as const, message: outcome.message ?? INTERRUPTED_MESSAGE }
          : null;
    // The stored URL and config: they may have been set or removed while the run went on
    // (A2A's push notification configs); the URL the run started with if the end could not be
    // stored (then sent as our completion payload: the config is not known).
    let callbackUrl = ending.callbackUrl;
    let callbackConfig: CallbackConfig | null = null;
    try {
      ({ callbackUrl, callbackConfig } = await this.storage.runs.update(
        runId,
        { status, usage, error: runError, finishedAt: new Date() },
        active.fence ?? undefined,
      ));
    } catch (error) {
      if (isRunFenced(error)) {
        // Another claim took the run over while it ended here: the new owner ends it. Nothing
        // more of ours is recorded, emitted or sent (no callback).
        this.logger.warn({ runId }, 'run fenced: its end is not recorded here');
        this.onFinished(active);
        return;
      }
      this.logger.error({ err: error, runId }, 'could not record the end of a run');
    }
    await this.deleteScratch(runId, outcome);
    await this.updateSessionStatus(session, scope, outcome, runId);
    const assistant = ending.lastAssistantId
      ? await this.finalAssistant(session.id, ending.lastAssistantId, scope, runId)
      : null;
    // The usage event goes with the terminal events, in their flush (one write of the log,
    // not two); a crash before it leaves the run's stored usage, which the repair of a missing
    // terminal event (run-recovery.ts) emits as this event.
    if (usageEvent) emitter.emit(usageEvent);
    emitter.emit({ type: 'status', status: 'idle' });
    switch (outcome.kind) {
      case 'completed':
        emitter.emit({ type: 'done', assistant_data: assistant ? toWireMessage(assistant) : null });
        break;
      case 'aborted':
        emitter.emit({ type: 'error', code: 'ABORTED', message: 'The run was aborted' });
        break;
      case 'interrupted':
        emitter.emit({
          type: 'error',
          code: 'UNAVAILABLE',
          message: outcome.message ?? INTERRUPTED_MESSAGE,
        });
        break;
      case 'failed':
        emitter.emit({
          type: 'error',
          code: outcome.error.code,
          message: outcome.error.message,
          ...(outcome.exception ? { exception: outcome.exception } : {}),
        });
        break;
    }
    await emitter.flush();
    // Reported before the session's next pending run may start (in onFinished).
    this.observer.runEnded({ runId, sessionId: session.id, outcome: outcome.kind });
    this.onFinished(active);
    if (callbackUrl !== null) {
      const payload: CompletionPayload = {
        session_id: session.id,
        message_id: assistant?.id ?? null,
        run_id: runId,
        status,
        output: assistant?.content ?? '',
        token_usage: { input: usage?.inputTokens ?? 0, output: usage?.outputTokens ?? 0 },
        model_used: assistant?.modelUsed ?? usage?.model ?? null,
        completed_at: new Date().toISOString(),
        error: runError,
      };
      void this.callbacks.dispatch(callbackUrl, payload, callbackConfig, active.fence ?? undefined);
    }
  }

  /**
   * A run that waits for a person's decision: `requires_action` with what it waits for and its
   * usage so far, then the `interrupt` event that ends its stream. It keeps its session (no
   * pending run starts) and sends no callback: it has not ended.
   */
  /**
   * The run's answer for its `done` event. The read is retried while it fails (a database
   * restart takes a second or two; the chaos run found `done` sent with `assistant_data: null`
   * for an answer that was stored); a message that is not there is not waited for.
   */
  private async finalAssistant(
    sessionId: string,
    messageId: string,
    scope: Scope,
    runId: string,
  ): Promise<Message | null> {
    for (let attempt = 1; ; attempt += 1) {
      try {
        return await this.storage.messages.get(sessionId, messageId, scope);
      } catch (error) {
        if (attempt >= FINAL_ASSISTANT_READS) {
          this.logger.warn({ err: error, runId }, 'could not read the final assistant message');
          return null;
        }
        await sleep(FINAL_ASSISTANT_RETRY_MS);
      }
    }
  }

  private async pause(
    active: ActiveRun,
    session: Session,
    action: PendingAction,
    usage: Usage | null,
  ): Promise<void> {
    const { emitter, runId } = active;
    try {
      await this.storage.runs.update(
        runId,
        { status: 'requires_action', pendingAction: action, usage },
        active.fence ?? undefined,
      );
    } catch (error) {
      if (isRunFenced(error)) {
        this.logger.warn({ runId }, 'run fenced: its pause is not recorded here');
        this.onFinished(active);
        return;
      }
      this.logger.error({ err: error, runId }, 'could not record the pause of a run');
    }
    emitter.emit({ type: 'status', status: 'idle' });
    emitter.emit(interruptEvent(runId, action));
    await emitter.flush();
    this.observer.runEnded({ runId, sessionId: session.id, outcome: 'paused' });
    this.onFinished(active);
  }

  /**
   * A run a newer message replaced (`rollback`), or one a caller cancelled to remove it: it is
   * removed with its user message, what it produced and its checkpoints, as if never sent; its
   * stream still ends, with `error ABORTED` and `message`. No completion callback is sent for a
   * run that no longer exists.
   */
  private async rollBack(active: ActiveRun, message: string): Promise<void> {
    const { emitter, runId } = active;
    await this.deleteScratch(runId, { kind: 'rolled_back' });
    try {
      await this.storage.rollbackRun(runId);
    } catch (error) {
      this.logger.error({ err: error, runId }, 'could not roll back a run');
    }
    emitter.emit({ type: 'status', status: 'idle' });
    emitter.emit({ type: 'error', code: 'ABORTED', message });
    await emitter.flush();
    this.onFinished(active);
  }

  /**
   * A run's `scratch` artifacts go when it ends, unless it failed (kept for debugging until the
   * session goes) or was interrupted (recovery may resume it).
   */
  private async deleteScratch(runId: string, outcome: Outcome): Promise<void> {
    if (outcome.kind === 'failed' || outcome.kind === 'interrupted') return;
    try {
      await this.storage.artifacts.deleteScratch(runId);
    } catch (error) {
      this.logger.warn({ err: error, runId }, 'could not delete the scratch artifacts of a run');
    }
  }

  /** Moves the session between `active` and `error` only: an operator's suspend/complete wins. */
  private async updateSessionStatus(
    session: Session,
    scope: Scope,
    outcome: Outcome,
    runId: string,
  ): Promise<void> {
    const next =
      outcome.kind === 'completed' ? 'active' : outcome.kind === 'failed' ? 'error' : null;
    // The run started on a session in that status: only the session's own runs, which never
    // overlap, move it between `active` and `error`, and an operator's change (suspend,
    // complete) is not moved back, so there is nothing to do — without reading it again.
    if (next === null || session.status === next) return;
    try {
      const current = await this.storage.sessions.get(session.id, scope);
      if (!current) return;
      // `abandoned` is an active session read after a long idle time: still movable.
      const stored = current.status === 'abandoned' ? 'active' : current.status;
      const movable = stored === 'active' || stored === 'error';
      if (movable && stored !== next) {
        if (this.statusWriter) await this.statusWriter(session.id, scope, next, runId);
        else await this.storage.sessions.update(session.id, { status: next }, scope);
      }
    } catch (error) {
      this.logger.error(
        { err: error, sessionId: session.id },
        'could not update the session status',
      );
    }
  }
}

/** The event that ends the stream of a run paused for a decision (also repaired after a crash). */
export function interruptEvent(runId: string, action: PendingAction): AgentEvent {
  return {
    type: 'interrupt',
    run_id: runId,
    tool_calls: action.tool_calls,
    allowed: Object.fromEntries(action.tool_calls.map((call) => [call.id, call.allowed])),
  };
}

/**
 * The `usage` event of a run that used `usage` (its meter, when this process ran it, names the
 * provider and model; else the stored usage does). Also emitted by the repair of a run whose
 * terminal events a crash lost.
 */
export function usageEventOf(usage: Usage, meter?: UsageMeter | null): AgentEvent {
  return {
    type: 'usage',
    input_tokens: usage.inputTokens,
    output_tokens: usage.outputTokens,
    estimated_cost: usage.costUsd,
    provider: meter?.provider ?? usage.provider ?? '',
    model: meter?.model ?? usage.model ?? '',
    estimated: usage.estimated,
  };
}
