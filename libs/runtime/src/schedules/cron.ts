import { Cron } from 'croner';
import { RuntimeError } from '../errors';

/**
 * Cron expressions through croner (11): 5 fields, or 6 with seconds first, in an IANA zone,
 * DST-correct (a fixed time in a repeated hour fires once, a fixed time in a skipped hour fires
 * right after the gap, the same day). See the runtime README ("Schedules") for why croner.
 */
export interface CronTimes {
  /** The first occurrence strictly after `after`; null when there is none. */
  next(after: Date): Date | null;
}

interface FieldRule {
  name: string;
  min: number;
  max: number;
}

const FIVE: FieldRule[] = [
  { name: 'minute', min: 0, max: 59 },
  { name: 'hour', min: 0, max: 23 },
  { name: 'day-of-month', min: 1, max: 31 },
  { name: 'month', min: 1, max: 12 },
  { name: 'day-of-week', min: 0, max: 7 },
];
const SIX: FieldRule[] = [{ name: 'second', min: 0, max: 59 }, ...FIVE];

const NICKNAMES = new Set([
  '@yearly',
  '@annually',
  '@monthly',
  '@weekly',
  '@daily',
  '@midnight',
  '@hourly',
]);

/** The error of a bad expression, naming the field (`expression` unless told otherwise). */
function invalid(message: string, path = 'expression'): RuntimeError {
  return RuntimeError.field(path, message);
}

/**
 * Checks the numbers of each field against its range, so the message names the field and the
 * value ("day-of-month 32 is out of range 1-31"); croner's own messages are less precise (it
 * reports a day-of-month of 32 as "Invalid value for day: 31").
 */
function checkFields(expression: string): void {
  if (NICKNAMES.has(expression.toLowerCase())) return;
  const parts = expression.split(/\s+/);
  if (parts.length !== 5 && parts.length !== 6) {
    throw invalid(
      `has ${parts.length} fields; a cron expression has 5 (minute hour day-of-month month day-of-week) or 6 (with seconds first)`,
    );
  }
  const rules = parts.length === 6 ? SIX : FIVE;
  parts.forEach((part, index) => {
    const rule = rules[index] as FieldRule;
    for (const token of part.split(',')) {
      const [base = '', step] = token.split('/');
      if (step !== undefined && !/^[1-9]\d*$/.test(step)) {
        throw invalid(`${rule.name} step "${step}" must be a whole number of at least 1`);
      }
      // `#n` (nth weekday) and letters (names, L, W) are croner's to check.
      for (const number of (base.split('#')[0] ?? '').match(/\d+/g) ?? []) {
        const value = Number(number);
        if (value < rule.min || value > rule.max) {
          throw invalid(`${rule.name} ${value} is out of range ${rule.min}-${rule.max}`);
        }
      }
    }
  });
}

/** Throws a VALIDATION_ERROR on `path` unless `timezone` is an IANA zone this runtime knows. */
export function checkTimeZone(timezone: string, path = 'timezone'): void {
  try {
    new Intl.DateTimeFormat('en-US', { timeZone: timezone });
  } catch {
    throw RuntimeError.field(
      path,
      `"${timezone}" is not a known IANA time zone (e.g. Europe/Berlin)`,
    );
  }
}

/**
 * Parses `expression` in `timezone`.
 * @throws RuntimeError VALIDATION_ERROR on `expression` or `timezone`, saying what is wrong.
 */
export function parseCron(expression: string, timezone: string): CronTimes {
  checkTimeZone(timezone);
  const trimmed = expression.trim();
  checkFields(trimmed);
  let cron: Cron;
  try {
    cron = new Cron(trimmed, { timezone, mode: '5-or-6-parts', paused: true });
  } catch (error) {
    throw invalid((error as Error).message.replace(/^CronPattern:\s*/, ''));
  }
  if (cron.nextRun(new Date(0)) === null) throw invalid('never matches a date');
  return {
    next: (after) => cron.nextRun(new Date(after.getTime())) ?? null,
  };
}
