import type { Usage } from '@cognition/contracts';
import type { RunFence, StorageBackend } from '@cognition/storage';
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
 * call, chained so they land in call order; `settled` before the run's final write.
 */
export class UsageProgress {
  private tail: Promise<void> = Promise.resolve();

  constructor(
    private readonly storage: StorageBackend,
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
    this.tail = this.tail
      .then(() => this.storage.runs.update(this.runId, { usage }, this.fence))
      .then(
        () => undefined,
        // The run goes on: the figures are stored again after its next call and at its end.
        (error: unknown) =>
          this.logger.warn({ err: error, runId: this.runId }, 'could not store the run’s usage'),
      );
  }

  /** Resolves once every recorded write landed (or failed), so none overtakes the final one. */
  settled(): Promise<void> {
    return this.tail;
  }
}
