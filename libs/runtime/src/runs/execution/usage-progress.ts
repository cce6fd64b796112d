import type { Usage } from '@cognition/contracts';
import type { RunFence, StorageBackend } from '@cognition/storage';
import type { EventLog } from '../../events/event-log';
import type { Logger } from '../../logger';
import type { UsageMeter } from '../../providers/usage';
import { combineUsage } from '../../providers/usage';

/**
 * Stores a running run's usage after each model call: what the run spent before this execution
 * (`prior`, read from the run at its start) plus this execution's meter. A process that dies
 * mid-run loses its meter with it; without this, the attempt that resumes the run (it reads the
 * stored usage as its `prior`) would count only its own calls, and the session's and the
 * analytics' tokens and cost would miss every call of the attempts before — calls that were
 * made and paid for, the ones a crash cut off and were redone included. One write per model
 * call, in call order; `settled` before the run's final write. A durable event log carries it in
 * its next flush (`EventLog.carryUsage`: the call's events and its usage in one write); else it
 * is a run update of its own, chained.
 */
export class UsageProgress {
  private tail: Promise<void> = Promise.resolve();

  constructor(
    private readonly storage: StorageBackend,
    private readonly log: EventLog,
    private readonly runId: string,
    private readonly prior: Usage | null,
    private readonly meter: UsageMeter,
    private readonly logger: Logger,
    /** The claim the run is executed under (its writes are refused once another took it). */
    private readonly fence?: RunFence,
  ) {}

  /** After a model call the meter counted: stores the run's usage so far. */
  record(): void {
    const usage = combineUsage(this.prior, this.meter.toUsage());
    // Handed to the log at once (its queue keeps the call order), so it joins the flush of the
    // call's own events rather than one after them.
    const stored =
      this.log.carryUsage && usage
        ? this.log.carryUsage(this.runId, usage, this.fence)
        : this.tail.then(() => this.storage.runs.update(this.runId, { usage }, this.fence));
    const landed = stored.then(
      () => undefined,
      // The run goes on: the figures are stored again after its next call and at its end.
      (error: unknown) =>
        this.logger.warn({ err: error, runId: this.runId }, 'could not store the run’s usage'),
    );
    this.tail = Promise.all([this.tail, landed]).then(() => undefined);
  }

  /** Resolves once every recorded write landed (or failed), so none overtakes the final one. */
  settled(): Promise<void> {
    return this.tail;
  }
}
