import { Card, Heading } from '@radix-ui/themes';
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
  ...(b.runs.total === 0 && b.sessions.total === 0 && b.costUsd === 0
    ? ['nothing ran']
    : [
        `cost ${cost(b.costUsd, b.costComplete)}`,
        `${b.runs.total} runs, ${b.sessions.total} sessions`,
      ]),
];

const STEP_MS: Record<BucketSize, number> = { hour: 3_600_000, day: 86_400_000 };

/** A bucket in which nothing happened. */
const emptyBucket = (start: Date): Bucket => ({
  start,
  sessions: { total: 0, byStatus: {} as Bucket['sessions']['byStatus'] },
  runs: { total: 0, failed: 0, aborted: 0 },
  tokensIn: 0,
  tokensOut: 0,
  estimatedTokensIn: 0,
  estimatedTokensOut: 0,
  costUsd: 0,
  costComplete: true,
  errorCount: 0,
  feedback: { count: 0, averageScore: null },
});

/**
 * Every hour or day of the period from `from` to `to`, oldest first: the server leaves empty
 * buckets out (its starts are UTC hours and days), and a chart of only the busy ones would put
 * Monday next to Thursday. The missing ones are added as empty buckets (drawn as no bar).
 */
export function fillBuckets(buckets: Bucket[], from: Date, to: Date, size: BucketSize): Bucket[] {
  const step = STEP_MS[size];
  const byStart = new Map(buckets.map((b) => [b.start.getTime(), b]));
  const filled: Bucket[] = [];
  for (let t = Math.floor(from.getTime() / step) * step; t <= to.getTime(); t += step) {
    filled.push(byStart.get(t) ?? emptyBucket(new Date(t)));
    byStart.delete(t);
  }
  // A bucket the server placed outside the period (clocks apart) is still shown.
  return [...filled, ...byStart.values()].sort((a, b) => a.start.getTime() - b.start.getTime());
}

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
        <Heading as="h2" size="4">
          {title}
        </Heading>
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
      <Heading as="h2" size="4">
        {title}
      </Heading>
      <Card asChild>
        <figure className="chart" aria-label={title}>
          <BarChart
            data={data}
            responsive={props.width === undefined}
            width={props.width ?? '100%'}
            height={HEIGHT}
            margin={{ top: 8, right: 8, bottom: 16, left: 16 }}
          >
            <CartesianGrid strokeDasharray="3 3" vertical={false} stroke="var(--gray-a5)" />
            <XAxis
              dataKey="tick"
              stroke="var(--gray-a8)"
              label={{
                value: bucket === 'hour' ? 'hour' : 'day',
                position: 'insideBottom',
                offset: -10,
                fill: 'var(--gray-11)',
                fontSize: 12,
              }}
            />
            <YAxis
              allowDecimals={byCost}
              tickFormatter={(v: number) => (byCost ? cost(v) : String(v))}
              width={byCost ? 72 : 40}
              stroke="var(--gray-a8)"
              label={{
                value: byCost ? 'cost (USD)' : 'runs',
                angle: -90,
                position: 'insideLeft',
                offset: -8,
                fill: 'var(--gray-11)',
                fontSize: 12,
                style: { textAnchor: 'middle' },
              }}
            />
            <Tooltip
              cursor={{ fill: 'var(--accent-a3)' }}
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
              fill="var(--accent-9)"
              radius={[3, 3, 0, 0]}
              maxBarSize={48}
              isAnimationActive={false}
            />
          </BarChart>
          <figcaption className="visually-hidden">
            {data.map((d) => `${bucketSummary(d.bucket, bucket).join(', ')}.`).join(' ')}
          </figcaption>
        </figure>
      </Card>
    </>
  );
}
