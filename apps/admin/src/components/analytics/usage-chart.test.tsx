// @vitest-environment jsdom
import type { UsageFigures } from '@cognition/contracts';
import { cleanup, render, screen } from '@testing-library/react';
import { afterEach, describe, expect, it } from 'vitest';
import type { Bucket } from './usage-chart';
import { bucketSummary, fillBuckets, tick, UsageChart } from './usage-chart';

afterEach(cleanup);

const figures = (runs: number, costUsd: number, costComplete: boolean): UsageFigures => ({
  sessions: {
    total: runs,
    byStatus: { active: runs, suspended: 0, completed: 0, failed: 0, abandoned: 0, error: 0 },
  },
  runs: { total: runs, failed: 0, aborted: 0 },
  tokensIn: 0,
  tokensOut: 0,
  estimatedTokensIn: 0,
  estimatedTokensOut: 0,
  costUsd,
  costComplete,
  errorCount: 0,
  feedback: { count: 0, averageScore: null },
});
const day = (iso: string, runs: number, costUsd = 0, costComplete = costUsd > 0): Bucket => ({
  ...figures(runs, costUsd, costComplete),
  start: new Date(iso),
});
const DAYS = [
  day('2026-11-25T00:00:00Z', 2, 0.5),
  day('2026-11-26T00:00:00Z', 0),
  day('2026-11-27T00:00:00Z', 3, 1.25),
];
/** The labels of an axis's ticks, as drawn. */
const ticks = (container: HTMLElement, axis: 'x' | 'y'): string[] =>
  [
    ...container.querySelectorAll(
      `.recharts-${axis}Axis-tick-labels .recharts-cartesian-axis-tick-value`,
    ),
  ].map((t) => t.textContent ?? '');
/** jsdom lays nothing out, so the chart gets a fixed size (the page's fills its box). */
const show = (buckets: Bucket[]) =>
  render(<UsageChart buckets={buckets} bucket="day" width={600} />);

describe('UsageChart', () => {
  it('draws cost per day with a bar per day, dates on one axis and amounts on the other', () => {
    const { container } = show(DAYS);
    expect(screen.getByRole('heading', { name: 'Cost per day' })).toBeTruthy();
    const chart = screen.getByRole('figure', { name: 'Cost per day' });
    // The day without runs keeps its date on the axis, with no bar above it.
    expect(chart.querySelectorAll('.recharts-bar-rectangle')).toHaveLength(2);
    expect(ticks(container, 'x')).toEqual(DAYS.map((b) => tick(b.start, 'day')));
    const amounts = ticks(container, 'y');
    expect(amounts.length).toBeGreaterThan(1);
    expect(amounts.every((t) => t.startsWith('$'))).toBe(true);
    // The text alternative names every day's figures.
    expect(chart.querySelector('figcaption')?.textContent).toContain('cost $1.25, 3 runs');
  });

  it('charts runs, saying so, when nothing in the period had a price (never $0 bars)', () => {
    const { container } = show([day('2026-11-26T00:00:00Z', 1), day('2026-11-27T00:00:00Z', 4)]);
    const chart = screen.getByRole('figure', { name: 'Runs per day (no priced calls)' });
    expect(chart.querySelectorAll('.recharts-bar-rectangle')).toHaveLength(2);
    const counts = ticks(container, 'y');
    expect(counts).toContain('4');
    expect(counts.some((t) => t.includes('$'))).toBe(false);
  });

  it('says there was no run instead of drawing empty bars', () => {
    show([day('2026-11-26T00:00:00Z', 0), day('2026-11-27T00:00:00Z', 0)]);
    expect(screen.getByRole('heading', { name: 'Runs per day (no priced calls)' })).toBeTruthy();
    expect(screen.getByText('No run in this period.')).toBeTruthy();
    expect(screen.queryByRole('figure')).toBeNull();
  });

  it('sums a bucket up in the cost wording of every page (the tooltip)', () => {
    const unpriced = day('2026-11-27T00:00:00Z', 2, 0, false);
    expect(bucketSummary(unpriced, 'day').slice(1)).toEqual([
      'cost unknown price',
      '2 runs, 2 sessions',
    ]);
    expect(bucketSummary(day('2026-11-27T00:00:00Z', 1, 0.2, false), 'day')[1]).toBe(
      'cost ≥ $0.2000 (some prices unknown)',
    );
  });

  it('lays out every hour or day of the period, the empty ones as no bar', () => {
    const filled = fillBuckets(
      [DAYS[0] as Bucket, DAYS[2] as Bucket],
      new Date('2026-11-24T13:00:00Z'),
      new Date('2026-11-28T09:00:00Z'),
      'day',
    );
    expect(filled.map((b) => b.start.toISOString().slice(0, 10))).toEqual([
      '2026-11-24',
      '2026-11-25',
      '2026-11-26',
      '2026-11-27',
      '2026-11-28',
    ]);
    expect(filled.map((b) => b.runs.total)).toEqual([0, 2, 0, 3, 0]);
    expect(bucketSummary(filled[0] as Bucket, 'day').slice(1)).toEqual(['nothing ran']);
    const { container } = show(filled);
    expect(container.querySelectorAll('.recharts-bar-rectangle')).toHaveLength(2);
    expect(ticks(container, 'x')).toHaveLength(5);
  });
});
