import type { ScheduleFireReason } from '@cognition/contracts';

/**
 * What the scheduler reports for metrics (the server turns it into Prometheus series). Must be
 * cheap and never throw.
 */
export interface ScheduleObserver {
  /** A run was started for a firing; `lagMs`: from the occurrence's due time to the run's creation. */
  fired(reason: ScheduleFireReason, lagMs: number): void;
  /** A firing could not start a run (target gone, refused); it is given up. */
  failed(reason: ScheduleFireReason): void;
  /** Occurrences missed while no node ran, handled per the schedule's `misfire`. */
  misfired(policy: 'run_once' | 'skip'): void;
}

export const NOOP_SCHEDULE_OBSERVER: ScheduleObserver = {
  fired: () => undefined,
  failed: () => undefined,
  misfired: () => undefined,
};
