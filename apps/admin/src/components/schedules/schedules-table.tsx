import { Button, Code, Flex, Table } from '@radix-ui/themes';
import type { Run, Schedule, ScheduleFire } from '@cognition/contracts';
import type { ReactNode } from 'react';
import { Empty } from '../common/states';
import { DataTable, StatusBadge } from '../common/ui';
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
    <DataTable columns={['Schedule', 'Next', 'Target', 'Message', 'Actions', 'Runs']}>
      {props.schedules.map((schedule) => {
        const busy = props.pendingId === schedule.id;
        return (
          <Table.Row key={schedule.id}>
            <Table.Cell>
              {describeSchedule(schedule, props.viewer)}
              <br />
              <Code variant="soft" color="gray" title={schedule.id}>
                {schedule.expression ?? 'once'}
              </Code>
            </Table.Cell>
            <Table.Cell>{nextFireText(schedule, props.viewer)}</Table.Cell>
            <Table.Cell>{target(schedule)}</Table.Cell>
            <Table.Cell>{schedule.content}</Table.Cell>
            <Table.Cell>
              <Flex gap="2" wrap="wrap">
                <Button
                  type="button"
                  size="1"
                  variant="soft"
                  color={schedule.enabled ? 'gray' : undefined}
                  disabled={busy}
                  onClick={() => props.onSetEnabled(schedule, !schedule.enabled)}
                >
                  {schedule.enabled ? 'Disable' : 'Enable'}
                </Button>
                <Button
                  type="button"
                  size="1"
                  disabled={busy}
                  onClick={() => props.onTrigger(schedule)}
                >
                  Trigger now
                </Button>
              </Flex>
            </Table.Cell>
            <Table.Cell>
              <details>
                <summary>
                  Last runs
                  {schedule.lastFiredAt &&
                    ` (last due ${inViewerZone(schedule.lastFiredAt, props.viewer)})`}
                </summary>
                {props.fires(schedule)}
              </details>
            </Table.Cell>
          </Table.Row>
        );
      })}
    </DataTable>
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
            <StatusBadge status={fire.run.status} />
          ) : (
            <StatusBadge status={fire.cleanup === 'done' ? 'given up' : 'no run'} />
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
