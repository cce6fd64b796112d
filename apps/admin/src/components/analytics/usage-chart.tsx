import type { UsageFigures } from '@cognition/contracts';
import { Bar, BarChart, CartesianGrid, Tooltip, XAxis, YAxis } from 'recharts';
import { cost } from '../common/money';
import { Empty } from '../common/states';

export type Bucket = UsageFigures & { start: Date };
export type BucketSize = 'hour' | 'day';

const HEIGHT = 240;

/** A bucket's start as its axis tick shows it: the hour of a day, or the day. */
export const tick = (start: Date, bucket: BucketSize): string =>
  bucket === 'hour'
    ? start.toLocaleTimeString(undefined, { hour: '2-digit', minute: '2-digit' })
    : start.toLocaleDateString(undefined, { month: 'short', day: 'numeric' });

/** Everything a bucket holds, in the cost wording of every page (its tooltip). */
export const bucketSummary = (b: Bucket, bucket: BucketSize): string[] => [
  bucket === 'hour' ? b.start.toLocaleString() : b.start.toLocaleDateString(),
  `cost ${cost(b.costUsd, b.costComplete)}`,
  `${b.runs.total} runs, ${b.sessions.total} sessions`,
];

/**
 * Cost per hour or day (recharts: axes with dates and values, a tooltip per bar). When nothing
 * in the period had a price it is titled and drawn as runs per bucket (a $0 bar would mislead),
 * and with no run at all it is an empty state, not a row of empty bars. `width` fixes the size
 * (component tests: jsdom lays nothing out); otherwise the chart fills its box's width.
 */
export function UsageChart(props: { buckets: Bucket[]; bucket: BucketSize; width?: number }) {
  const { buckets, bucket } = props;
  const byCost = buckets.some((b) => b.costUsd > 0);
  const title = byCost ? `Cost per ${bucket}` : `Runs per ${bucket} (no priced calls)`;
  if (!buckets.some((b) => b.runs.total > 0 || b.costUsd > 0))
    return (
      <>
        <h2>{title}</h2>
        <Empty>No run in this period.</Empty>
      </>
    );
  const data = buckets.map((b) => ({
    tick: tick(b.start, bucket),
    value: byCost ? b.costUsd : b.runs.total,
    bucket: b,
  }));
  return (
    <>
      <h2>{title}</h2>
      <figure className="chart" aria-label={title}>
        <BarChart
          data={data}
          responsive={props.width === undefined}
          width={props.width ?? '100%'}
          height={HEIGHT}
          margin={{ top: 8, right: 8, bottom: 0, left: 8 }}
        >
          <CartesianGrid strokeDasharray="3 3" vertical={false} />
          <XAxis dataKey="tick" />
          <YAxis
            allowDecimals={byCost}
            tickFormatter={(v: number) => (byCost ? cost(v) : String(v))}
            width={byCost ? 72 : 40}
          />
          <Tooltip
            content={({ active, payload }) => {
              const b = (payload?.[0]?.payload as { bucket?: Bucket } | undefined)?.bucket;
              if (!active || !b) return null;
              return (
                <div className="chart-tooltip">
                  {bucketSummary(b, bucket).map((line) => (
                    <div key={line}>{line}</div>
                  ))}
                </div>
              );
            }}
          />
          {/* No animation: the page refetches every 10 s, and bars regrowing each time distract. */}
          <Bar
            dataKey="value"
            name={byCost ? 'cost' : 'runs'}
            fill="var(--accent)"
            isAnimationActive={false}
          />
        </BarChart>
        <figcaption className="visually-hidden">
          {data.map((d) => `${bucketSummary(d.bucket, bucket).join(', ')}.`).join(' ')}
        </figcaption>
      </figure>
    </>
  );
}
