import { Text } from '@radix-ui/themes';
import { cost } from '../common/money';
import type { TimelineSpan, TurnState } from './turn-state';

const ms = (value: number): string =>
  value < 1000 ? `${Math.round(value)} ms` : `${(value / 1000).toFixed(value < 10_000 ? 2 : 1)} s`;

/**
 * A turn's run timeline: one row per model call, tool call (sandbox exec), wait for a decision
 * and downtime before a resumed attempt, each with its duration and a bar placed on the turn's
 * time axis; the attempts and the time the run was down when it was resumed after a crash; then
 * the run's tokens and cost (the `usage` event: per run, not per call).
 */
export function RunTimeline({ turn, now }: { turn: TurnState; now: number }) {
  const spans = turn.timeline;
  if (spans.length === 0) return null;
  const start = (spans[0] as TimelineSpan).startedAt;
  const end = Math.max(...spans.map((s) => s.endedAt ?? now));
  const total = Math.max(end - start, 1);
  const downtime = spans
    .filter((s) => s.kind === 'downtime')
    .reduce((sum, s) => sum + ((s.endedAt ?? now) - s.startedAt), 0);
  return (
    <details className="timeline" open>
      <summary>
        <Text size="2" weight="medium">
          Run timeline · {ms(end - start)}
          {turn.attempt > 0 &&
            ` · ${turn.attempt + 1} attempts (resumed ${turn.attempt}× after a crash, ${ms(downtime)} down)`}
          {turn.usage &&
            ` · ${turn.usage.input_tokens} in / ${turn.usage.output_tokens} out tokens${turn.usage.estimated ? ' (estimated)' : ''} · ${cost(turn.usage.estimated_cost ?? 0, turn.usage.estimated_cost !== null)}`}
        </Text>
      </summary>
      <ol aria-label="Run timeline">
        {spans.map((span, i) => {
          const duration = (span.endedAt ?? now) - span.startedAt;
          return (
            <li key={i} className={`span ${span.kind}`}>
              <span className="span-label">
                {span.label}
                {span.attempt > 0 && span.kind !== 'downtime' && ` (attempt ${span.attempt + 1})`}
              </span>
              <span className="span-track" aria-hidden="true">
                <span
                  className="span-bar"
                  style={{
                    left: `${((span.startedAt - start) / total) * 100}%`,
                    width: `${Math.max((duration / total) * 100, 0.5)}%`,
                  }}
                />
              </span>
              <span className="span-duration">
                {span.held ? 'held' : span.endedAt === null ? `${ms(duration)}…` : ms(duration)}
              </span>
            </li>
          );
        })}
      </ol>
    </details>
  );
}
