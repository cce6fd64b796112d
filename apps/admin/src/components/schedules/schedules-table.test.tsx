// @vitest-environment jsdom
import { cleanup, fireEvent, render, screen } from '@testing-library/react';
import { afterEach, describe, expect, it, vi } from 'vitest';
import type { Run, Schedule } from '@cognition/contracts';
import type { FireWithRun } from './schedules-table';
import { FiresList, SchedulesTable } from './schedules-table';

afterEach(cleanup);

const VIEWER = { zone: 'Europe/Berlin', locale: 'en-GB' };

const schedule = (over: Partial<Schedule>): Schedule => ({
  id: 'sch_1',
  scope: {},
  kind: 'cron',
  expression: '30 2 * * *',
  timezone: 'Europe/Berlin',
  runAt: null,
  endTime: null,
  enabled: true,
  misfire: 'run_once',
  target: { kind: 'new_session', agentName: 'default', config: {}, onRunCompleted: 'keep' },
  content: 'Write the daily report',
  metadata: {},
  callbackUrl: null,
  multitaskStrategy: 'enqueue',
  nextFireAt: new Date('2026-11-28T01:30:00Z'),
  lastFiredAt: null,
  createdAt: new Date('2026-11-27T10:00:00Z'),
  updatedAt: new Date('2026-11-27T10:00:00Z'),
  ...over,
});

function renderTable(schedules: Schedule[], pendingId: string | null = null) {
  const onSetEnabled = vi.fn();
  const onTrigger = vi.fn();
  render(
    <SchedulesTable
      schedules={schedules}
      pendingId={pendingId}
      onSetEnabled={onSetEnabled}
      onTrigger={onTrigger}
      fires={(s) => <p>fires of {s.id}</p>}
      viewer={VIEWER}
    />,
  );
  return { onSetEnabled, onTrigger };
}

describe('SchedulesTable', () => {
  it('shows each schedule in words with its next time in the viewer’s zone', () => {
    renderTable([schedule({})]);
    expect(screen.getByText('At 02:30, every day (Europe/Berlin)')).toBeTruthy();
    expect(screen.getByText(/^28 Nov 2026, 02:30 CET$/)).toBeTruthy();
    expect(screen.getByText('new default session')).toBeTruthy();
    expect(screen.getByText('Last runs')).toBeTruthy();
  });

  it('disables an enabled schedule, enables a disabled one, triggers either', () => {
    const on = schedule({});
    const off = schedule({ id: 'sch_2', enabled: false });
    const { onSetEnabled, onTrigger } = renderTable([on, off]);
    expect(screen.getByText('disabled')).toBeTruthy();
    fireEvent.click(screen.getByRole('button', { name: 'Disable' }));
    expect(onSetEnabled).toHaveBeenCalledWith(on, false);
    fireEvent.click(screen.getByRole('button', { name: 'Enable' }));
    expect(onSetEnabled).toHaveBeenCalledWith(off, true);
    fireEvent.click(screen.getAllByRole('button', { name: 'Trigger now' })[1] as HTMLElement);
    expect(onTrigger).toHaveBeenCalledWith(off);
  });

  it('holds the buttons of a schedule whose action is in flight', () => {
    renderTable([schedule({}), schedule({ id: 'sch_2' })], 'sch_1');
    const buttons = screen.getAllByRole<HTMLButtonElement>('button', { name: 'Trigger now' });
    expect(buttons.map((b) => b.disabled)).toEqual([true, false]);
  });
});

describe('FiresList', () => {
  it('lists the last firings with their runs’ status, or why there is no run', () => {
    const fire = (due: string, run: Partial<Run> | null, cleanup: FireWithRun['cleanup']) =>
      ({
        scheduleId: 'sch_1',
        dueAt: new Date(due),
        claimedAt: new Date(due),
        nodeId: 'n1',
        reason: 'scheduled',
        runId: run ? 'run_1' : null,
        sessionId: run ? 'ses-1' : null,
        cleanup,
        run: run as Run | null,
      }) satisfies FireWithRun;
    render(
      <FiresList
        fires={[
          fire('2026-11-27T01:30:00Z', { status: 'completed' }, 'none'),
          fire('2026-11-26T01:30:00Z', null, 'done'),
        ]}
        viewer={VIEWER}
      />,
    );
    expect(screen.getByText('completed')).toBeTruthy();
    expect(screen.getByText('given up')).toBeTruthy();
    expect(screen.getByRole('link', { name: 'session' }).getAttribute('href')).toBe(
      '#/sessions/ses-1',
    );
  });

  it('says when a schedule has not fired yet', () => {
    render(<FiresList fires={[]} />);
    expect(screen.getByText('No firings yet.')).toBeTruthy();
  });
});
