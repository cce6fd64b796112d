import type {
  ModelUsageTotals,
  SessionUsage,
  StatsStatus,
  UsageFigures,
  UsageStats,
} from '@cognition/contracts';
import type { ModelContribution } from './contributions';

/*
 * The read side of the usage arithmetic both backends share (pure, no I/O): a session's usage
 * and per-model rows, and the stats figures and buckets. The backends differ only in where the
 * sums come from (memory: its records; Prisma: one GROUP BY), so every rounding, ordering and
 * completeness rule lives here once.
 */

/** Rounds sums of floating-point costs to micro-dollars (the precision prices are given in). */
function roundUsd(value: number): number {
  return Math.round(value * 1e6) / 1e6;
}

/** Orders per-model rows: most expensive first, then most tokens, then provider/model. */
function compareModelRows(
  a: { provider: string; model: string; costUsd: number; tokensIn: number; tokensOut: number },
  b: { provider: string; model: string; costUsd: number; tokensIn: number; tokensOut: number },
): number {
  return (
    b.costUsd - a.costUsd ||
    b.tokensIn + b.tokensOut - (a.tokensIn + a.tokensOut) ||
    a.provider.localeCompare(b.provider) ||
    a.model.localeCompare(b.model)
  );
}

/** Every status the aggregates count, in a stable order. */
export const STATS_STATUSES: readonly StatsStatus[] = [
  'active',
  'abandoned',
  'suspended',
  'completed',
  'failed',
  'error',
];

/** Sums over a group of sessions with one stats status (what a backend's query returns). */
export interface FigureRow {
  status: StatsStatus;
  sessions: number;
  runs: number;
  failed: number;
  aborted: number;
  tokensIn: number;
  tokensOut: number;
  estimatedTokensIn: number;
  estimatedTokensOut: number;
  costUsd: number;
  unpricedCalls: number;
  feedbackCount: number;
  feedbackScoreSum: number;
}

/** Figures under construction: the public ones plus what the average needs. */
export interface FigureSums {
  figures: UsageFigures;
  scoreSum: number;
  unpriced: number;
}

function emptyFigureSums(): FigureSums {
  return {
    figures: {
      sessions: {
        total: 0,
        byStatus: Object.fromEntries(STATS_STATUSES.map((s) => [s, 0])) as Record<
          StatsStatus,
          number
        >,
      },
      runs: { total: 0, failed: 0, aborted: 0 },
      tokensIn: 0,
      tokensOut: 0,
      estimatedTokensIn: 0,
      estimatedTokensOut: 0,
      costUsd: 0,
      costComplete: true,
      errorCount: 0,
      feedback: { count: 0, averageScore: null },
    },
    scoreSum: 0,
    unpriced: 0,
  };
}

/** The totals of a group of sessions of one status. */
export function figureTotalsOf(row: FigureRow): FigureTotals {
  const { status, sessions, ...rest } = row;
  const byStatus = Object.fromEntries(STATS_STATUSES.map((s) => [s, 0])) as Record<
    StatsStatus,
    number
  >;
  byStatus[status] = sessions;
  return { ...rest, byStatus };
}

/** Sums over a group of sessions of any statuses, with their count per status. */
export type FigureTotals = Omit<FigureRow, 'status' | 'sessions'> & {
  byStatus: Record<StatsStatus, number>;
};

function addFigureTotals(sums: FigureSums, totals: FigureTotals): void {
  const f = sums.figures;
  for (const status of STATS_STATUSES) {
    const count = totals.byStatus[status];
    f.sessions.total += count;
    f.sessions.byStatus[status] += count;
  }
  f.runs.total += totals.runs;
  f.runs.failed += totals.failed;
  f.runs.aborted += totals.aborted;
  f.errorCount += totals.failed;
  f.tokensIn += totals.tokensIn;
  f.tokensOut += totals.tokensOut;
  f.estimatedTokensIn += totals.estimatedTokensIn;
  f.estimatedTokensOut += totals.estimatedTokensOut;
  f.costUsd += totals.costUsd;
  f.feedback.count += totals.feedbackCount;
  sums.scoreSum += totals.feedbackScoreSum;
  sums.unpriced += totals.unpricedCalls;
}

function finishFigures(sums: FigureSums): UsageFigures {
  const f = sums.figures;
  return {
    ...f,
    costUsd: roundUsd(f.costUsd),
    costComplete: sums.unpriced === 0,
    feedback: {
      count: f.feedback.count,
      averageScore:
        f.feedback.count === 0
          ? null
          : Math.round((sums.scoreSum / f.feedback.count) * 1000) / 1000,
    },
  };
}

/** Start of the UTC hour or day that holds `time`. */
export function bucketStart(time: Date, bucket: 'hour' | 'day'): Date {
  const start = new Date(time.getTime());
  start.setUTCMinutes(0, 0, 0);
  if (bucket === 'day') start.setUTCHours(0);
  return start;
}

/** A session's running totals as a backend keeps them: the public figures plus unpriced calls. */
export type UsageTotals = Omit<SessionUsage, 'costComplete'> & { unpricedCalls: number };

/** The public usage of a session's totals: cost rounded, complete when no call was unpriced. */
export function sessionUsageOf(totals: UsageTotals): SessionUsage {
  return {
    tokensIn: totals.tokensIn,
    tokensOut: totals.tokensOut,
    estimatedTokensIn: totals.estimatedTokensIn,
    estimatedTokensOut: totals.estimatedTokensOut,
    costUsd: roundUsd(totals.costUsd),
    costComplete: totals.unpricedCalls === 0,
    runs: totals.runs,
    errorCount: totals.errorCount,
    abortedCount: totals.abortedCount,
    lastModel: totals.lastModel,
    lastProvider: totals.lastProvider,
    startedAt: totals.startedAt,
    lastActivityAt: totals.lastActivityAt,
    endedAt: totals.endedAt,
  };
}

function modelUsageOf(m: ModelContribution): ModelUsageTotals {
  return {
    provider: m.provider,
    model: m.model,
    calls: m.calls,
    tokensIn: m.tokensIn,
    tokensOut: m.tokensOut,
    costUsd: roundUsd(m.costUsd),
    costComplete: m.unpricedCalls === 0,
  };
}

/** A session's per-model report: the rows with any call or token, most expensive first. */
export function sessionModelRows(models: Iterable<ModelContribution>): ModelUsageTotals[] {
  return [...models]
    .filter((m) => m.calls !== 0 || m.tokensIn !== 0 || m.tokensOut !== 0)
    .map(modelUsageOf)
    .sort(compareModelRows);
}

/** The cost-by-model answer from per-model sums: the rows with calls, most expensive first. */
export function costByModelRows(models: Iterable<ModelContribution>): ModelUsageTotals[] {
  return [...models]
    .filter((m) => m.calls !== 0)
    .map(modelUsageOf)
    .sort(compareModelRows);
}

/** Sums of one group of sessions and, for bucketed stats, the start of its bucket. */
export interface BucketedTotals {
  totals: FigureTotals;
  /** The bucket's start; ignored when the stats are not bucketed. */
  start: Date | null;
}

/**
 * The stats answer: every group summed into the totals and, when `bucketed`, into the sums of
 * its bucket, the buckets oldest first.
 */
export function usageStatsOf(groups: Iterable<BucketedTotals>, bucketed: boolean): UsageStats {
  const all = emptyFigureSums();
  const buckets = new Map<number, FigureSums>();
  for (const { totals, start } of groups) {
    addFigureTotals(all, totals);
    if (bucketed && start) {
      const key = start.getTime();
      let sums = buckets.get(key);
      if (!sums) buckets.set(key, (sums = emptyFigureSums()));
      addFigureTotals(sums, totals);
    }
  }
  const stats: UsageStats = finishFigures(all);
  if (bucketed) {
    stats.buckets = [...buckets.entries()]
      .sort(([a], [b]) => a - b)
      .map(([start, sums]) => ({ start: new Date(start), ...finishFigures(sums) }));
  }
  return stats;
}
