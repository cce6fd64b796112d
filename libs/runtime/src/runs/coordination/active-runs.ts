import type { RunFence, Scope } from '@cognition/storage';
import type { EventLog } from '../../events/event-log';
import type { Logger } from '../../logger';
import type { RunControlChannel } from './ports';
import type { ActiveRun, CancelReason } from '../run-context';
import { stopFenced } from '../run-context';
import { RunEmitter } from '../run-emitter';

/**
 * The runs this process executes, each registered on the control channel so a cancel request
 * (from this process or, with a distributed channel, another one) aborts it.
 */
export class ActiveRuns {
  private readonly runs = new Map<string, { run: ActiveRun; stopListening: () => void }>();

  constructor(
    private readonly control: RunControlChannel,
    private readonly log: EventLog,
    private readonly logger: Logger,
    /** Whether this process surely still holds a run's claim (`RunLeases.surelyHeld`). */
    private readonly surelyHeld: (run: ActiveRun) => boolean = () => true,
  ) {}

  /** Registers a run accepted by this process; `done` is set by whoever starts it. */
  add(
    runId: string,
    sessionId: string,
    scope: Scope,
    startSeq = 0,
    fence: RunFence | null = null,
  ): ActiveRun {
    const run: ActiveRun = {
      runId,
      sessionId,
      scope,
      controller: new AbortController(),
      emitter: new RunEmitter(this.log, sessionId, runId, this.logger, startSeq, {
        fence,
        onFenced: () => this.fenced(run),
      }),
      fence,
      claimHeld: () => {
        if (fence === null || this.surelyHeld(run)) return true;
        this.logger.warn(
          { runId },
          'stopped executing a run whose claim may have run out (late renewals): nothing more is called or stored here',
        );
        stopFenced(run, this.log);
        return false;
      },
      cancelReason: null,
      done: Promise.resolve(),
    };
    const stopListening = this.control.listen(runId, (reason) => {
      run.cancelReason ??= reason;
      run.controller.abort();
    });
    this.runs.set(runId, { run, stopListening });
    return run;
  }

  /** Forgets a run (after its terminal event); idempotent. */
  remove(runId: string): void {
    const entry = this.runs.get(runId);
    if (!entry) return;
    entry.stopListening();
    this.runs.delete(runId);
  }

  /**
   * Storage refused a write of the run under its claim: another claim took it over. Its
   * executor stops at once (outcome `lost`: nothing more recorded, nothing more emitted) and
   * what the event log still holds of it is dropped.
   */
  fenced(run: ActiveRun): void {
    stopFenced(run, this.log);
  }

  /** Cancels a run of this process directly (not through the control channel). */
  cancelLocal(runId: string, reason: CancelReason): void {
    const entry = this.runs.get(runId);
    if (!entry) return;
    entry.run.cancelReason ??= reason;
    entry.run.controller.abort();
  }

  /**
   * Hands runs to the next node (graceful shutdown): their executors are aborted (outcome
   * `lost`: nothing of theirs is recorded here) and their events no longer written. A run that
   * already emitted its terminal event is left to finish writing it (its end is decided; the
   * next node would find nothing to resume). Resolves as `EventLog.abandon` does: true once none
   * of the handed runs' events can still be stored.
   */
  abandon(runIds: readonly string[], timeoutMs: number): Promise<boolean> {
    const handed: string[] = [];
    for (const runId of runIds) {
      const run = this.runs.get(runId)?.run;
      if (!run || run.emitter.finished) continue;
      handed.push(runId);
      run.emitter.abandon();
      run.cancelReason ??= 'lost';
      run.controller.abort();
    }
    return this.log.abandon(handed, timeoutMs);
  }

  has(runId: string): boolean {
    return this.runs.has(runId);
  }

  forSession(sessionId: string): ActiveRun | undefined {
    for (const { run } of this.runs.values()) if (run.sessionId === sessionId) return run;
    return undefined;
  }

  ids(): string[] {
    return [...this.runs.keys()];
  }

  all(): ActiveRun[] {
    return [...this.runs.values()].map((e) => e.run);
  }
}
