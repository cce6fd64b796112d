import type {
  AgentEvent,
  AgentEventEnvelope,
  ErrorCode,
  Run,
  Session,
  UpdateRunInput,
} from '@cognition/contracts';
import { isTerminalEvent, toWireMessage } from '@cognition/contracts';
import type { ExecutionBackendFactory } from '@cognition/sandbox';
import type { RunFence, StorageBackend } from '@cognition/storage';
import { isRunFenced } from '@cognition/storage';
import type { EventLog } from '../events/event-log';
import { EVENT_SEQ_WIDTH, eventId, runIdOfEventId, seqOfEventId } from '../ids';
import type { Logger } from '../logger';
import type { ActiveRuns } from './coordination/active-runs';
import type { RunExecutor } from './execution/run-executor';
import { executeInBackground } from './execution/run-executor';
import type { RunLeases } from './coordination/run-leases';
import { RunEmitter } from './run-emitter';
import { ROLLED_BACK_MESSAGE, SUPERSEDED_MESSAGE } from './run-context';
import { inputOfRun } from './admission/user-message';
import { INTERRUPTED_MESSAGE, interruptEvent, usageEventOf } from './run-finisher';

export const STOPPED_MESSAGE = 'The server stopped while the run was active';

/** What to do at startup with runs a dead process left active. */
export type RecoveryMode = 'resume' | 'interrupt';

export interface RunRecoveryOptions {
  storage: StorageBackend;
  log: EventLog;
  logger: Logger;
  active: ActiveRuns;
  executor: Pick<RunExecutor, 'execute'>;
  mode: RecoveryMode;
  /** A run resumed more often than this fails instead (a crash loop must end). */
  maxRecoveries: number;
  /** Starts the session's oldest pending run if none of its runs is active. */
  startNext(sessionId: string): Promise<void>;
  /** Which runs this node may take over, and the claim it must win first. */
  leases: Pick<RunLeases, 'claim' | 'isClaimable' | 'mayTakeMore' | 'nodeId'>;
  /** Ends the commands a run's dead process left running, before anything else of it. */
  sandbox?: Pick<ExecutionBackendFactory, 'reapOrphans'>;
}

/** The runs `recover` took care of, by what it did with them. */
export interface RecoveryReport {
  /** Executing again in this process (status still `running`). */
  resumed: Run[];
  /** Ended `interrupted` with a terminal `error UNAVAILABLE` event. */
  interrupted: Run[];
  /** Ended `failed`: resumed more than `maxRecoveries` times. */
  failed: Run[];
  /**
   * Replaced by a newer message sent with `interrupt` (ended `interrupted`) or `rollback`
   * (removed) whose cancel the dead process had not finished.
   */
  superseded: Run[];
  /** Sessions whose waiting (`pending`) runs were started again. */
  pendingSessions: number;
  /** Queued runs a busy node of the cluster left unclaimed, started here (not resumed). */
  adopted: Run[];
  /**
   * Runs whose terminal event is stored but whose end their node could not record (its
   * database was unreachable then): ended as that event says (`done`: completed, `error`:
   * aborted, interrupted or failed with its code and message).
   */
  settled: Run[];
}

/**
 * Recovery of runs storage lists as active but no process executes any more. With `resume`,
 * each is taken up again from its thread's last checkpoint: same run id, event ids continuing,
 * a `resumed` event first. With `interrupt` (or when the run cannot be resumed: its session or
 * user message is gone), it ends `interrupted`. On one node it runs at startup and takes every
 * such run; in a cluster it runs periodically and takes only runs whose lease expired, each
 * after winning its claim.
 */
export class RunRecovery {
  constructor(private readonly o: RunRecoveryOptions) {}

  async recover(): Promise<RecoveryReport> {
    const report: RecoveryReport = {
      resumed: [],
      interrupted: [],
      failed: [],
      superseded: [],
      pendingSessions: 0,
      adopted: [],
      settled: [],
    };
    const pending = await this.o.storage.runs.listPending();
    const supersededBy = new Map<string, Run>();
    for (const run of pending) {
      const strategy = run.multitaskStrategy;
      if (run.supersedesRunId && (strategy === 'interrupt' || strategy === 'rollback')) {
        supersededBy.set(run.supersedesRunId, run);
      }
    }
    const now = new Date();
    // A node without a free slot takes no run: it does not list them (10,000 queued runs of a
    // burst of schedule firings were a read of every row per node every half lease).
    const active = this.o.leases.mayTakeMore() ? await this.o.storage.runs.listActive() : [];
    for (const run of active) {
      if (this.o.active.has(run.id) || !this.o.leases.isClaimable(run, now)) continue;
      if (!this.o.leases.mayTakeMore()) break;
      // Of several nodes recovering at once, the one whose claim wins takes the run.
      const claim = await this.o.leases.claim(run.id);
      if (!claim) continue;
      // Every write for the run from here on is made under this claim (run fencing).
      try {
        await this.takeOver(run, claim.fence ?? undefined, supersededBy.get(run.id), report);
      } catch (error) {
        // Another node's claim came after ours (our lease ran out meanwhile): its run now.
        if (!isRunFenced(error)) throw error;
        this.o.logger.warn({ runId: run.id }, 'run fenced: another node took it over first');
      }
    }
    const sessions = new Set(pending.map((run) => run.sessionId));
    for (const sessionId of sessions) await this.o.startNext(sessionId);
    report.pendingSessions = sessions.size;
    return report;
  }

  /** What recovery does with a run it claimed: adopt, supersede, interrupt, fail or resume it. */
  private async takeOver(
    run: Run,
    fence: RunFence | undefined,
    by: Run | undefined,
    report: RecoveryReport,
  ): Promise<void> {
    const own = (await this.o.log.readAfter(run.sessionId, `${run.id}:`)).events.filter(
      (e) => e.runId === run.id,
    );
    if (this.o.leases.nodeId !== null && run.ownerNode === null && own.length === 0) {
      // Accepted by a node without a free slot and never claimed: it starts here, afresh.
      if (await this.adopt(run, fence)) report.adopted.push(run);
      return;
    }
    // Whatever the run was doing, no command of it may go on running once this node has it,
    // least of all one the resumed run will report as "not run again".
    await this.reapOrphans(run);
    if (by) {
      report.superseded.push(await this.supersede(run, own, by, fence));
      return;
    }
    const terminal = own.find((e) => isTerminalEvent(e.event))?.event;
    if (terminal) {
      report.settled.push(await this.settle(run, terminal, fence));
      return;
    }
    if (this.o.mode === 'interrupt') {
      report.interrupted.push(await this.interrupt(run, own, fence));
      return;
    }
    const attempt = own.filter((e) => e.event.type === 'resumed').length + 1;
    if (attempt > this.o.maxRecoveries) {
      report.failed.push(await this.fail(run, own, attempt - 1, fence));
      return;
    }
    const resumed = await this.resume(run, own, attempt, fence);
    if (resumed) report.resumed.push(resumed);
    else report.interrupted.push(await this.interrupt(run, own, fence));
  }

  /** Best effort: a sandbox that cannot be reached (Docker down) must not keep the run stuck. */
  private async reapOrphans(run: Run): Promise<void> {
    if (!this.o.sandbox) return;
    try {
      const report = await this.o.sandbox.reapOrphans({ sessionId: run.sessionId, runId: run.id });
      if (report.killed + report.unreachable > 0) {
        this.o.logger.warn(
          { runId: run.id, sessionId: run.sessionId, ...report },
          `ended ${report.killed} command(s) the run's dead process left running` +
            (report.unreachable > 0 ? `; ${report.unreachable} on another machine` : ''),
        );
      }
    } catch (error) {
      this.o.logger.error(
        { runId: run.id, sessionId: run.sessionId, err: error },
        'could not end the commands the run left running',
      );
    }
  }

  private async adopt(run: Run, fence: RunFence | undefined): Promise<boolean> {
    const { storage } = this.o;
    const session = await storage.sessions.get(run.sessionId, {});
    const input = session ? await inputOfRun(storage, run, session) : null;
    if (!session || !input) return false;
    const active = this.o.active.add(run.id, session.id, {}, 0, fence ?? null);
    executeInBackground(this.o.executor, active, input, {
      runs: this.o.active,
      logger: this.o.logger,
      what: 'adopted run',
    });
    return true;
  }

  /** Finishes what a newer message's `interrupt` or `rollback` asked of a run before the crash. */
  private async supersede(
    run: Run,
    own: AgentEventEnvelope[],
    by: Run,
    fence: RunFence | undefined,
  ): Promise<Run> {
    if (by.multitaskStrategy === 'rollback') {
      await this.o.storage.rollbackRun(run.id);
      await this.terminate(run, own, ROLLED_BACK_MESSAGE, 'ABORTED', fence);
      return run;
    }
    const updated = await this.o.storage.runs.update(
      run.id,
      {
        status: 'interrupted',
        error: { code: 'UNAVAILABLE', message: SUPERSEDED_MESSAGE },
        finishedAt: new Date(),
      },
      fence,
    );
    await this.terminate(run, own, SUPERSEDED_MESSAGE, 'UNAVAILABLE', fence);
    return updated;
  }

  private async resume(
    run: Run,
    own: AgentEventEnvelope[],
    attempt: number,
    fence: RunFence | undefined,
  ): Promise<Run | null> {
    const { storage } = this.o;
    const session: Session | null = await storage.sessions.get(run.sessionId, {});
    const input = session ? await inputOfRun(storage, run, session, true) : null;
    if (!session || !input) return null;
    const tuple = await storage.checkpointer.getTuple({
      configurable: { thread_id: session.threadId, checkpoint_ns: '' },
    });
    // A step that completed after the last checkpoint left its writes pending on it.
    const pendingMark = (tuple?.pendingWrites ?? [])
      .filter(([, channel]) => channel === 'eventMark')
      .map(([, , value]) => value)
      .at(-1);
    const mark =
      pendingMark ??
      (tuple?.checkpoint.channel_values as { eventMark?: unknown } | undefined)?.eventMark;
    const voidAfter =
      typeof mark === 'string' && runIdOfEventId(mark) === run.id ? mark : eventId(run.id, 0);
    const lastSeq = Math.max(
      seqOfEventId(own[own.length - 1]?.id ?? '') ?? 0,
      seqOfEventId(voidAfter) ?? 0,
    );
    const active = this.o.active.add(run.id, session.id, {}, lastSeq, fence ?? null);
    active.emitter.emit({
      type: 'resumed',
      run_id: run.id,
      void_after_event_id: voidAfter,
      attempt,
    });
    this.o.logger.info({ runId: run.id, attempt, voidAfter }, 'resuming a run cut off by a crash');
    executeInBackground(this.o.executor, active, input, {
      runs: this.o.active,
      logger: this.o.logger,
      what: 'resumed run',
    });
    return run;
  }

  private async interrupt(
    run: Run,
    own: AgentEventEnvelope[],
    fence: RunFence | undefined,
  ): Promise<Run> {
    const updated = await this.o.storage.runs.update(
      run.id,
      {
        status: 'interrupted',
        error: { code: 'UNAVAILABLE', message: STOPPED_MESSAGE },
        finishedAt: new Date(),
      },
      fence,
    );
    await this.terminate(run, own, STOPPED_MESSAGE, 'UNAVAILABLE', fence);
    return updated;
  }

  /** Records the end the run's stored terminal event already told its clients. */
  private async settle(run: Run, terminal: AgentEvent, fence: RunFence | undefined): Promise<Run> {
    const end: Pick<UpdateRunInput, 'status' | 'error'> =
      terminal.type === 'done'
        ? { status: 'completed', error: null }
        : terminal.type === 'error' && terminal.code === 'ABORTED'
          ? { status: 'aborted', error: null }
          : terminal.type === 'error' && terminal.message === INTERRUPTED_MESSAGE
            ? { status: 'interrupted', error: { code: terminal.code, message: terminal.message } }
            : terminal.type === 'error'
              ? { status: 'failed', error: { code: terminal.code, message: terminal.message } }
              : { status: 'interrupted', error: { code: 'UNAVAILABLE', message: STOPPED_MESSAGE } };
    return this.o.storage.runs.update(run.id, { ...end, finishedAt: new Date() }, fence);
  }

  private async fail(
    run: Run,
    own: AgentEventEnvelope[],
    recoveries: number,
    fence: RunFence | undefined,
  ): Promise<Run> {
    const message = `The run was cut off by a server crash ${recoveries + 1} times (resumed ${recoveries} times, the limit); it is not resumed again`;
    const updated = await this.o.storage.runs.update(
      run.id,
      { status: 'failed', error: { code: 'UNAVAILABLE', message }, finishedAt: new Date() },
      fence,
    );
    await this.terminate(run, own, message, 'UNAVAILABLE', fence);
    return updated;
  }

  /** Gives the run its terminal `error` event unless the log already holds one. */
  private async terminate(
    run: Run,
    own: AgentEventEnvelope[],
    message: string,
    code: ErrorCode = 'UNAVAILABLE',
    fence?: RunFence,
  ): Promise<void> {
    if (own.some((e) => isTerminalEvent(e.event))) return;
    const lastId = own[own.length - 1]?.id;
    // Nothing of the run survived (in-memory log): take the highest sequence number so the
    // event sorts after anything a client may have seen before the restart.
    const startSeq = lastId ? (seqOfEventId(lastId) ?? 0) : 10 ** EVENT_SEQ_WIDTH - 2;
    const emitter = new RunEmitter(this.o.log, run.sessionId, run.id, this.o.logger, startSeq, {
      fence: fence ?? null,
    });
    emitter.emit({ type: 'error', code, message });
    await emitter.flush();
  }
}

/**
 * A process that died after storing a run's end and before storing its terminal event leaves
 * a finished run whose stream never ends (or a paused run without its `interrupt`). Gives such a run its terminal events (`status idle`,
 * then `done` with the run's last assistant message, or `error` with the run's error), with the
 * next ids of its sequence. Idempotent: nothing happens when the log holds a terminal event (two
 * concurrent repairs write the same ids, which the log stores once).
 */
export async function repairTerminalEvent(
  storage: StorageBackend,
  log: EventLog,
  logger: Logger,
  run: Run,
): Promise<void> {
  if (run.status === 'queued' || run.status === 'running' || run.status === 'pending') return;
  const own = (await log.readAfter(run.sessionId, `${run.id}:`)).events.filter(
    (e) => e.runId === run.id,
  );
  if (run.status === 'requires_action') {
    // Paused: its stream ends with its `interrupt`, which the process may not have stored.
    if (run.pendingAction && own.at(-1)?.event.type !== 'interrupt') {
      const emitter = await repairEmitter(storage, log, logger, run, own);
      if (!emitter) return;
      emitter.emit(interruptEvent(run.id, run.pendingAction));
      await emitter.flush();
    }
    return;
  }
  if (own.length === 0 || own.some((e) => isTerminalEvent(e.event))) return;
  const emitter = await repairEmitter(storage, log, logger, run, own);
  if (!emitter) return;
  // The usage event goes out with the terminal events (same flush), so it was lost with them.
  if (run.usage && !own.some((e) => e.event.type === 'usage'))
    emitter.emit(usageEventOf(run.usage));
  emitter.emit({ type: 'status', status: 'idle' });
  if (run.status === 'completed') {
    const messages = await storage.messages.listAll(run.sessionId, {});
    const assistant = messages
      .filter((m) => m.role === 'assistant' && m.metadata['runId'] === run.id)
      .at(-1);
    emitter.emit({ type: 'done', assistant_data: assistant ? toWireMessage(assistant) : null });
  } else {
    emitter.emit({
      type: 'error',
      code: run.error?.code ?? (run.status === 'aborted' ? 'ABORTED' : 'UNAVAILABLE'),
      message: run.error?.message ?? `The run ended ${run.status}`,
    });
  }
  await emitter.flush();
}

/**
 * The emitter of a repair, writing under the claim the run is held under now (run fencing):
 * a claim made after this read (a paused run resumed on another node, which numbers its events
 * from the same last stored one) refuses the repair's events instead of letting them take the
 * resumed run's ids. null when the run changed since the caller read it (nothing to repair).
 * Read only when there is something to write: a stream of a run that ended normally costs
 * nothing more.
 */
async function repairEmitter(
  storage: StorageBackend,
  log: EventLog,
  logger: Logger,
  run: Run,
  own: readonly AgentEventEnvelope[],
): Promise<RunEmitter | null> {
  const fence = await storage.runs.fenceOf(run.id);
  // After the fence: a claim that came before it shows here (the run is active again).
  const current = await storage.runs.get(run.id);
  if (current?.status !== run.status) return null;
  return new RunEmitter(log, run.sessionId, run.id, logger, seqOf(own), { fence });
}

function seqOf(own: readonly AgentEventEnvelope[]): number {
  return seqOfEventId(own[own.length - 1]?.id ?? '') ?? 0;
}
