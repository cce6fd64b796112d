import { Code, Text } from '@radix-ui/themes';
import type { Run } from '@cognition/client';
import { useSubscription } from '@trpc/tanstack-react-query';
import { useReducer, useState } from 'react';
import { useTRPC } from '../../../trpc';
import { Empty, ErrorView, Loading } from '../../common/states';
import { StatusBadge } from '../../common/ui';
import { RunTimeline } from '../../playground/run-timeline';
import { newTurn, turnReducer } from '../../playground/turn-state';

/**
 * One run's timeline, folded from its stored events: `runs.events` for the run replays what the
 * event log holds and ends with the run (live after that while it still runs). Each event carries
 * when it was emitted, so a run read long after lays out as it happened, its crashes included
 * (a `resumed` event: the downtime since the last event before it, and the attempt).
 */
function PastRunTimeline({ sessionId, run }: { sessionId: string; run: Run }) {
  const trpc = useTRPC();
  const [turn, dispatch] = useReducer(turnReducer, run.id, (id) => newTurn(id, ''));
  const subscription = useSubscription(
    trpc.runs.events.subscriptionOptions(
      { sessionId, runId: run.id },
      { onData: (tracked) => dispatch(tracked.data) },
    ),
  );
  if (subscription.status === 'error') return <ErrorView error={subscription.error} />;
  if (turn.timeline.length === 0) {
    return subscription.status === 'idle' ? (
      <Empty>The event log no longer holds this run’s events (older events are trimmed).</Empty>
    ) : (
      <Loading what="Loading the run’s events" />
    );
  }
  return <RunTimeline turn={turn} now={Date.now()} />;
}

/**
 * The timeline of each of a session's runs, newest first, each read when opened (a session may
 * have many runs; only the ones looked at cost a replay).
 */
export function RunTimelines({ sessionId, runs }: { sessionId: string; runs: Run[] }) {
  const [opened, setOpened] = useState<ReadonlySet<string>>(new Set());
  const newestFirst = [...runs].sort((a, b) => b.createdAt.getTime() - a.createdAt.getTime());
  return (
    <ul className="run-timelines">
      {newestFirst.map((run) => (
        <li key={run.id}>
          <details
            onToggle={(e) => {
              const open = e.currentTarget.open;
              setOpened((now) => {
                const next = new Set(now);
                if (open) next.add(run.id);
                else next.delete(run.id);
                return next;
              });
            }}
          >
            <summary>
              <Text size="2">
                Timeline of run <Code variant="ghost">{run.id}</Code>{' '}
                <StatusBadge status={run.status} />
              </Text>
            </summary>
            {opened.has(run.id) && <PastRunTimeline sessionId={sessionId} run={run} />}
          </details>
        </li>
      ))}
    </ul>
  );
}
