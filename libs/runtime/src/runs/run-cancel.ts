import type { Run } from '@cognition/contracts';
import type { Scope } from '@cognition/storage';
import { RuntimeError } from '../errors';
import type { ActiveRuns } from './coordination/active-runs';
import type { RunControlChannel } from './coordination/ports';
import type { PausedRuns } from './paused-runs';
import type { RunContext } from './run-context';
import { REMOVED_MESSAGE, requireSession, sleep } from './run-context';
import type { AbortResult } from './run-manager-options';

/** How `RunCancel` ends a run. */
export interface CancelOptions {
  /** Only this run: nothing happens when another run holds the session. */
  runId?: string;
  /**
   * Removes the run as if it had never been sent (`StorageBackend.rollbackRun`: its row, its
   * user message and what followed, the checkpoints its thread gained), instead of keeping it
   * `aborted`.
   */
  rollback?: boolean;
}

export interface RunCancelOptions {
  ctx: Pick<RunContext, 'storage'>;
  active: Pick<ActiveRuns, 'forSession'>;
  control: RunControlChannel;
  paused: Pick<PausedRuns, 'abort'>;
  /** How long a cancel waits for a run of this process to wind down. */
  waitMs: number;
}

/**
 * Cancelling runs (`RunManager.abort`, `cancelPending`): the run holding a session through the
 * control channel (any node) or, paused for a decision, at once; a run still waiting behind
 * another one before it ever starts.
 */
export class RunCancel {
  constructor(private readonly o: RunCancelOptions) {}

  /** See `RunManager.abort`. */
  async abort(sessionId: string, scope: Scope, options: CancelOptions = {}): Promise<AbortResult> {
    const { storage } = this.o.ctx;
    const session = await requireSession(storage, sessionId, scope);
    const local = this.o.active.forSession(sessionId);
    const held = local ? null : await storage.runs.getActive(sessionId);
    const runId = local?.runId ?? held?.id;
    if (runId === undefined || (options.runId !== undefined && runId !== options.runId)) {
      return { run: null, aborted: false };
    }
    if (held?.status === 'requires_action') {
      // Paused for a decision: no process executes it, so it is ended here.
      const run = await this.o.paused.abort(
        session,
        held,
        scope,
        options.rollback ? { kind: 'rolled_back', message: REMOVED_MESSAGE } : { kind: 'aborted' },
      );
      return { run: run ?? (await storage.runs.get(held.id)), aborted: run !== null };
    }
    const delivered = await this.o.control.cancel(runId, options.rollback ? 'removed' : 'aborted');
    if (local) await Promise.race([local.done, sleep(this.o.waitMs)]);
    return { run: await storage.runs.get(runId), aborted: delivered };
  }

  /** See `RunManager.cancelPending`. */
  async cancelPending(
    sessionId: string,
    runId: string,
    scope: Scope,
    options: Pick<CancelOptions, 'rollback'> = {},
  ): Promise<Run | null> {
    const { storage } = this.o.ctx;
    const session = await requireSession(storage, sessionId, scope);
    const run = await storage.runs.get(runId);
    if (!run || run.sessionId !== session.id) {
      throw new RuntimeError('RUN_NOT_FOUND', `Run not found: ${runId}`);
    }
    const ended = await storage.runs.cancelPending(run.id, new Date());
    if (!ended) return null;
    // Nothing is written to the log for it: its stream ends on an `error ABORTED` event made
    // when read (run-events.ts, `unstartedEnd`).
    if (options.rollback) await storage.runs.delete(run.id);
    return ended;
  }
}
