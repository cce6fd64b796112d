import type { Run, Schedule, ScheduleFire } from '@cognition/contracts';
import type { ReactNode } from 'react';
import { Empty, TableHead } from '../common/states';
import type { Viewer } from './schedule-text';
import { describeSchedule, inViewerZone, nextFireText } from './schedule-text';

/** A schedule's firing with the run it started (null: none yet, given up, or deleted since). */
export type FireWithRun = ScheduleFire & { run: Run | null };

function target(schedule: Schedule): string {
  const t = schedule.target;
  if (t.kind === 'session') return `session …${t.sessionId.slice(-8)}`;
  return `new ${t.agentName} session${t.onRunCompleted === 'delete' ? ' (deleted after)' : ''}`;
}

/**
 * Schedules, newest first: the expression in words, the next fire time in the viewer's zone,
 * enable/disable and trigger now; each opens its last runs (`fires(schedule)`, fetched only
 * when opened).
 */
export function SchedulesTable(props: {
  schedules: Schedule[];
  /** The schedule an action is in flight for: its buttons wait. */
  pendingId: string | null;
  onSetEnabled: (schedule: Schedule, enabled: boolean) => void;
  onTrigger: (schedule: Schedule) => void;
  fires: (schedule: Schedule) => ReactNode;
  viewer?: Viewer;
}) {
  return (
    <div className="table-wrap">
      <table>
        <TableHead columns={['Schedule', 'Next', 'Target', 'Message', 'Actions', 'Runs']} />
        <tbody>
          {props.schedules.map((schedule) => {
            const busy = props.pendingId === schedule.id;
            return (
              <tr key={schedule.id}>
                <td>
                  {describeSchedule(schedule, props.viewer)}
                  <br />
                  <code title={schedule.id}>{schedule.expression ?? 'once'}</code>
                </td>
                <td>{nextFireText(schedule, props.viewer)}</td>
                <td>{target(schedule)}</td>
                <td>{schedule.content}</td>
                <td>
                  <div className="actions">
                    <button
                      type="button"
                      disabled={busy}
                      onClick={() => props.onSetEnabled(schedule, !schedule.enabled)}
                    >
                      {schedule.enabled ? 'Disable' : 'Enable'}
                    </button>
                    <button type="button" disabled={busy} onClick={() => props.onTrigger(schedule)}>
                      Trigger now
                    </button>
                  </div>
                </td>
                <td>
                  <details>
                    <summary>
                      Last runs
                      {schedule.lastFiredAt &&
                        ` (last due ${inViewerZone(schedule.lastFiredAt, props.viewer)})`}
                    </summary>
                    {props.fires(schedule)}
                  </details>
                </td>
              </tr>
            );
          })}
        </tbody>
      </table>
    </div>
  );
}

/** A schedule's last firings, newest first, each with its run's status. */
export function FiresList({ fires, viewer }: { fires: FireWithRun[]; viewer?: Viewer }) {
  if (fires.length === 0) return <Empty>No firings yet.</Empty>;
  return (
    <ul className="fires">
      {fires.map((fire) => (
        <li key={fire.dueAt.toISOString()}>
          {inViewerZone(fire.dueAt, viewer)} · {fire.reason} ·{' '}
          {fire.run ? (
            <span className={`badge ${fire.run.status}`}>{fire.run.status}</span>
          ) : (
            <span className="badge">{fire.cleanup === 'done' ? 'given up' : 'no run'}</span>
          )}
          {fire.sessionId && (
            <>
              {' '}
              <a href={`#/sessions/${encodeURIComponent(fire.sessionId)}`}>session</a>
            </>
          )}
        </li>
      ))}
    </ul>
  );
}
