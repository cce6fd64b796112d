import type { Schedule } from '@cognition/contracts';
import cronstrue from 'cronstrue';

type Timing = Pick<Schedule, 'kind' | 'expression' | 'timezone' | 'runAt'>;

/** Whose zone and locale: the viewer's (the browser's) unless given (tests). */
export interface Viewer {
  zone?: string;
  locale?: string;
}

/** A date and time as the viewer reads it: in their zone, with the zone's name. */
export function inViewerZone(date: Date, viewer: Viewer = {}): string {
  return date.toLocaleString(viewer.locale, {
    year: 'numeric',
    month: 'short',
    day: 'numeric',
    hour: '2-digit',
    minute: '2-digit',
    timeZoneName: 'short',
    ...(viewer.zone !== undefined ? { timeZone: viewer.zone } : {}),
  });
}

/**
 * The schedule in words: a cron expression through cronstrue ("At 02:30, every day") with the
 * zone it is read in; a delayed run as its one time.
 */
export function describeSchedule(schedule: Timing, viewer: Viewer = {}): string {
  if (schedule.kind === 'once' || schedule.expression === null) {
    return schedule.runAt ? `Once, ${inViewerZone(schedule.runAt, viewer)}` : 'Once';
  }
  const words = cronstrue.toString(schedule.expression, {
    use24HourTimeFormat: true,
    throwExceptionOnParseError: false,
    verbose: true,
  });
  return `${words} (${schedule.timezone})`;
}

/** When it fires next, in the viewer's zone; why not, when it will not. */
export function nextFireText(
  schedule: Pick<Schedule, 'enabled' | 'nextFireAt'>,
  viewer: Viewer = {},
): string {
  if (!schedule.enabled) return 'disabled';
  if (!schedule.nextFireAt) return 'nothing left to fire';
  return inViewerZone(schedule.nextFireAt, viewer);
}
