import { describe, expect, it } from 'vitest';
import { describeSchedule, nextFireText } from './schedule-text';

describe('schedule text', () => {
  it('says a cron expression in words, with the zone it is read in', () => {
    const daily = {
      kind: 'cron' as const,
      expression: '30 2 * * *',
      timezone: 'Europe/Berlin',
      runAt: null,
    };
    expect(describeSchedule(daily)).toBe('At 02:30, every day (Europe/Berlin)');
    const seconds = { ...daily, expression: '*/2 * * * * *', timezone: 'UTC' };
    expect(describeSchedule(seconds)).toBe(
      'Every 2 seconds, every minute, every hour, every day (UTC)',
    );
  });

  it('says a delayed run as its one time in the viewer’s zone', () => {
    const once = {
      kind: 'once' as const,
      expression: null,
      timezone: 'UTC',
      runAt: new Date('2026-11-27T16:00:00Z'),
    };
    expect(describeSchedule(once, { zone: 'Asia/Tokyo', locale: 'en-US' })).toMatch(
      /^Once, Nov 28, 2026, 01:00\sAM GMT\+9$/,
    );
  });

  it('gives the next fire time in the viewer’s zone, or why there is none', () => {
    const next = new Date('2026-11-27T16:00:00Z');
    expect(
      nextFireText(
        { enabled: true, nextFireAt: next },
        { zone: 'America/New_York', locale: 'en-US' },
      ),
    ).toMatch(/^Nov 27, 2026, 11:00\sAM EST$/);
    expect(nextFireText({ enabled: false, nextFireAt: next })).toBe('disabled');
    expect(nextFireText({ enabled: true, nextFireAt: null })).toBe('nothing left to fire');
  });
});
