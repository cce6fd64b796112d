import type { Comparison, Goal, Verdict } from './types';

/**
 * The `p`-th percentile (0–100) of `values` by linear interpolation between the closest ranks
 * (numpy's default), so p50 of an even-sized sample is the mean of the middle two.
 * @throws RangeError for an empty sample or `p` outside 0–100.
 */
export function percentile(values: readonly number[], p: number): number {
  if (values.length === 0) throw new RangeError('percentile of an empty sample');
  if (!(p >= 0 && p <= 100)) throw new RangeError(`percentile must be within 0-100, got ${p}`);
  const sorted = [...values].sort((a, b) => a - b);
  const rank = (p / 100) * (sorted.length - 1);
  const low = Math.floor(rank);
  const high = Math.ceil(rank);
  const lowValue = sorted[low] as number;
  const highValue = sorted[high] as number;
  return lowValue + (highValue - lowValue) * (rank - low);
}

export function median(values: readonly number[]): number {
  return percentile(values, 50);
}

export interface LatencySummary {
  samples: number;
  p50: number;
  p99: number;
  mean: number;
  min: number;
  max: number;
}

/** Summary of latencies in ms. @throws RangeError for an empty sample. */
export function summarizeLatencies(ms: readonly number[]): LatencySummary {
  if (ms.length === 0) throw new RangeError('no latency samples');
  return {
    samples: ms.length,
    p50: percentile(ms, 50),
    p99: percentile(ms, 99),
    mean: ms.reduce((sum, v) => sum + v, 0) / ms.length,
    min: Math.min(...ms),
    max: Math.max(...ms),
  };
}

/** Whether `ratio` satisfies `goal`. */
export function verdictOf(ratio: number, goal: Goal): Verdict {
  switch (goal.kind) {
    case 'at-most':
      return ratio <= goal.ratio ? 'met' : 'missed';
    case 'at-least':
      return ratio >= goal.ratio ? 'met' : 'missed';
  }
}

/**
 * Compares our headline figure with the reference's: `ratio = ours / reference`, with a verdict
 * when a goal is given. @throws RangeError when either figure is not a positive finite number
 * (a ratio of them would be meaningless).
 */
export function compare(
  ours: number,
  reference: number,
  against: string,
  againstFigures: string,
  goal?: Goal,
): Comparison {
  for (const [name, value] of [
    ['ours', ours],
    ['reference', reference],
  ] as const) {
    if (!Number.isFinite(value) || value <= 0) {
      throw new RangeError(`cannot compare: ${name} is ${value}`);
    }
  }
  const ratio = ours / reference;
  return goal
    ? { against, againstFigures, ratio, goal, verdict: verdictOf(ratio, goal) }
    : { against, againstFigures, ratio };
}

/** A duration in ms with three significant digits and a sensible unit. */
export function formatMs(ms: number): string {
  if (ms >= 10_000) return `${(ms / 1000).toFixed(1)} s`;
  if (ms >= 1000) return `${(ms / 1000).toFixed(2)} s`;
  if (ms >= 100) return `${ms.toFixed(0)} ms`;
  if (ms >= 10) return `${ms.toFixed(1)} ms`;
  if (ms >= 1) return `${ms.toFixed(2)} ms`;
  return `${(ms * 1000).toFixed(0)} µs`;
}

/** A rate with thousands separators, e.g. `12,345 ops/s`. */
export function formatRate(perSecond: number, unit: string): string {
  const digits = perSecond >= 100 ? 0 : perSecond >= 10 ? 1 : 2;
  return `${perSecond.toLocaleString('en-US', { maximumFractionDigits: digits, minimumFractionDigits: digits })} ${unit}`;
}

export function formatBytes(bytes: number): string {
  const abs = Math.abs(bytes);
  if (abs >= 1024 ** 3) return `${(bytes / 1024 ** 3).toFixed(1)} GiB`;
  if (abs >= 1024 ** 2) return `${(bytes / 1024 ** 2).toFixed(1)} MiB`;
  if (abs >= 1024) return `${(bytes / 1024).toFixed(1)} KiB`;
  return `${bytes.toFixed(0)} B`;
}

export function formatLatency(summary: LatencySummary): string {
  return `p50 ${formatMs(summary.p50)} · p99 ${formatMs(summary.p99)} (n=${summary.samples})`;
}

export function formatRatio(ratio: number): string {
  return `${ratio.toFixed(2)}×`;
}

export function formatGoal(goal: Goal): string {
  return `${goal.kind === 'at-most' ? '≤' : '≥'} ${goal.ratio}×`;
}
