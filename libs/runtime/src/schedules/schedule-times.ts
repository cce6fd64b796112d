import type { Schedule } from '@cognition/contracts';
import { parseCron } from './cron';

/** The clock the scheduler reads; specs inject one, so they never sleep through minutes. */
export interface Clock {
  now(): Date;
}

export const SYSTEM_CLOCK: Clock = { now: () => new Date() };

type Timing = Pick<Schedule, 'kind' | 'expression' | 'timezone' | 'runAt' | 'endTime'>;

/**
 * The first occurrence of a schedule strictly after `after` that is not past its end time;
 * null when none is left (a `once` schedule has none after its one time).
 */
export function nextOccurrence(schedule: Timing, after: Date): Date | null {
  let next: Date | null;
  if (schedule.kind === 'once') {
    next = schedule.runAt && schedule.runAt > after ? schedule.runAt : null;
  } else {
    next = parseCron(schedule.expression ?? '', schedule.timezone).next(after);
  }
  if (next && schedule.endTime && next > schedule.endTime) return null;
  return next;
}
