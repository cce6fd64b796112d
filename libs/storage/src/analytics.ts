import type {
  CostByModelRow,
  FeedbackInput,
  MessageFeedback,
  MessageSearchPage,
  MessageSearchQuery,
  Run,
  SessionUsage,
  SessionUsageReport,
  StatsQuery,
  StatsStatus,
  UsageFigures,
  UsageQuery,
  UsageStats,
} from '@cognition/contracts';
import type { Scope } from './port';

/**
 * Per-session usage records and the aggregates over them. The records are written by the run
 * store itself, in the same transaction as every run create/update (see {@link runContribution}),
 * so they never drift from the runs and concurrent runs add up exactly.
 */
export interface UsageStore {
  /** Totals and the per-model breakdown; null when missing or outside the caller's scope. */
  get(sessionId: string, scope: Scope): Promise<SessionUsageReport | null>;
  /**
   * Totals of many sessions at once (for session lists); sessions without runs are absent.
   * The caller has already checked scope (the ids come from a scoped read).
   */
  totals(sessionIds: readonly string[]): Promise<Map<string, SessionUsage>>;
  /**
   * Figures over the sessions in scope that match the filters, computed in the database;
   * `now` (default: the clock) decides which active sessions count as abandoned.
   */
  stats(query: StatsQuery, scope: Scope, now?: Date): Promise<UsageStats>;
  /** One row per provider/model over the matching sessions, most expensive first. */
  costByModel(query: UsageQuery, scope: Scope, now?: Date): Promise<CostByModelRow[]>;
}

/**
 * Ratings of assistant messages. Each write also moves the session's feedback figures of the
 * aggregates in the same transaction.
 */
export interface FeedbackStore {
  /**
   * Sets (replaces) the feedback of an assistant message. SESSION_NOT_FOUND (missing or outside
   * scope), MESSAGE_NOT_FOUND, VALIDATION_ERROR naming `messageId` for a message that is not
   * the assistant's and naming `score`/`text` for bad input.
   */
  set(
    sessionId: string,
    messageId: string,
    input: FeedbackInput,
    scope: Scope,
  ): Promise<MessageFeedback>;
  /** Removes it; false when there was none. SESSION_NOT_FOUND as for `set`. */
  delete(sessionId: string, messageId: string, scope: Scope): Promise<boolean>;
  /** The feedback of the given messages of a session (scope checked by the caller). */
  forMessages(
    sessionId: string,
    messageIds: readonly string[],
  ): Promise<Map<string, MessageFeedback>>;
}

/**
 * Full-text search over message contents (SQLite FTS5, PostgreSQL tsvector + GIN, memory: a
 * scan), kept current by every write of the message rows (inserts, projections, rebuilds).
 * Only sessions in the caller's scope match; a `sessionId` outside it is SESSION_NOT_FOUND.
 */
export interface SearchStore {
  search(query: MessageSearchQuery, scope: Scope): Promise<MessageSearchPage>;
}

/** What one run adds to its session's usage records. */
export interface RunContribution {
  runs: number;
  errors: number;
  aborted: number;
  tokensIn: number;
  tokensOut: number;
  estimatedTokensIn: number;
  estimatedTokensOut: number;
  costUsd: number;
  unpricedCalls: number;
  models: Map<string, ModelContribution>;
}

export interface ModelContribution {
  provider: string;
  model: string;
  calls: number;
  tokensIn: number;
  tokensOut: number;
  costUsd: number;
  unpricedCalls: number;
}

export function modelKey(provider: string, model: string): string {
  return `${provider}\u0000${model}`;
}

/** Adds `figures` to the row of its provider/model in `models` (created at zero when absent). */
export function addModelFigures(
  models: Map<string, ModelContribution>,
  figures: ModelContribution,
): void {
  const key = modelKey(figures.provider, figures.model);
  const row = models.get(key) ?? {
    provider: figures.provider,
    model: figures.model,
    calls: 0,
    tokensIn: 0,
    tokensOut: 0,
    costUsd: 0,
    unpricedCalls: 0,
  };
  row.calls += figures.calls;
  row.tokensIn += figures.tokensIn;
  row.tokensOut += figures.tokensOut;
  row.costUsd += figures.costUsd;
  row.unpricedCalls += figures.unpricedCalls;
  models.set(key, row);
}

/**
 * A run's contribution to its session's records: one run; an error when `failed`; an abort when
 * `aborted`; its usage per model (runs recorded without a breakdown count as one call of their
 * model). A model with an unknown price adds its calls to `unpricedCalls` and nothing to the
 * cost. Every backend applies `after - before` on each run write, in the run's transaction.
 */
export function runContribution(run: Pick<Run, 'status' | 'usage'> | null): RunContribution {
  const out: RunContribution = {
    runs: run ? 1 : 0,
    errors: run?.status === 'failed' ? 1 : 0,
    aborted: run?.status === 'aborted' ? 1 : 0,
    tokensIn: 0,
    tokensOut: 0,
    estimatedTokensIn: 0,
    estimatedTokensOut: 0,
    costUsd: 0,
    unpricedCalls: 0,
    models: new Map(),
  };
  const usage = run?.usage;
  if (!usage) return out;
  const entries =
    usage.models && usage.models.length > 0
      ? usage.models
      : usage.model !== null && usage.provider !== null
        ? [
            {
              provider: usage.provider,
              model: usage.model,
              calls: 1,
              inputTokens: usage.inputTokens,
              outputTokens: usage.outputTokens,
              costUsd: usage.costUsd,
              estimated: usage.estimated,
            },
          ]
        : [];
  if (entries.length === 0) {
    // Usage without a model: totals only.
    out.tokensIn = usage.inputTokens;
    out.tokensOut = usage.outputTokens;
    if (usage.estimated) {
      out.estimatedTokensIn = usage.inputTokens;
      out.estimatedTokensOut = usage.outputTokens;
    }
    if (usage.costUsd === null) out.unpricedCalls = 1;
    else out.costUsd = usage.costUsd;
    return out;
  }
  for (const entry of entries) {
    out.tokensIn += entry.inputTokens;
    out.tokensOut += entry.outputTokens;
    if (entry.estimated) {
      out.estimatedTokensIn += entry.inputTokens;
      out.estimatedTokensOut += entry.outputTokens;
    }
    const unpriced = entry.costUsd === null ? Math.max(entry.calls, 1) : 0;
    out.costUsd += entry.costUsd ?? 0;
    out.unpricedCalls += unpriced;
    addModelFigures(out.models, {
      provider: entry.provider,
      model: entry.model,
      calls: entry.calls,
      tokensIn: entry.inputTokens,
      tokensOut: entry.outputTokens,
      costUsd: entry.costUsd ?? 0,
      unpricedCalls: unpriced,
    });
  }
  return out;
}

/** `after - before`, field by field and model by model (models whose delta is all zero left out). */
export function contributionDelta(
  before: RunContribution,
  after: RunContribution,
): RunContribution {
  const models = new Map<string, ModelContribution>();
  for (const key of new Set([...before.models.keys(), ...after.models.keys()])) {
    const a = after.models.get(key);
    const b = before.models.get(key);
    const base = (a ?? b) as ModelContribution;
    const delta: ModelContribution = {
      provider: base.provider,
      model: base.model,
      calls: (a?.calls ?? 0) - (b?.calls ?? 0),
      tokensIn: (a?.tokensIn ?? 0) - (b?.tokensIn ?? 0),
      tokensOut: (a?.tokensOut ?? 0) - (b?.tokensOut ?? 0),
      costUsd: (a?.costUsd ?? 0) - (b?.costUsd ?? 0),
      unpricedCalls: (a?.unpricedCalls ?? 0) - (b?.unpricedCalls ?? 0),
    };
    const zero =
      delta.calls === 0 &&
      delta.tokensIn === 0 &&
      delta.tokensOut === 0 &&
      delta.costUsd === 0 &&
      delta.unpricedCalls === 0;
    if (!zero) models.set(key, delta);
  }
  return {
    runs: after.runs - before.runs,
    errors: after.errors - before.errors,
    aborted: after.aborted - before.aborted,
    tokensIn: after.tokensIn - before.tokensIn,
    tokensOut: after.tokensOut - before.tokensOut,
    estimatedTokensIn: after.estimatedTokensIn - before.estimatedTokensIn,
    estimatedTokensOut: after.estimatedTokensOut - before.estimatedTokensOut,
    costUsd: after.costUsd - before.costUsd,
    unpricedCalls: after.unpricedCalls - before.unpricedCalls,
    models,
  };
}

/**
 * How a run write moves the session's usage dates: the first run's start, the last activity,
 * the end of the latest run (cleared while a run is active), the last model used.
 */
export interface RunTimes {
  startedAt: Date;
  activityAt: Date;
  /** Set when the run is finished; null when it is active (the session is busy again). */
  endedAt: Date | null;
  lastModel: { provider: string; model: string } | null;
}

export function runTimes(run: Run): RunTimes {
  const active = run.status === 'queued' || run.status === 'running';
  const usage = run.usage;
  return {
    startedAt: run.startedAt ?? run.createdAt,
    activityAt: run.updatedAt,
    endedAt: active ? null : (run.finishedAt ?? run.updatedAt),
    lastModel:
      usage && usage.provider !== null && usage.model !== null
        ? { provider: usage.provider, model: usage.model }
        : null,
  };
}

/** Rounds sums of floating-point costs to micro-dollars (the precision prices are given in). */
export function roundUsd(value: number): number {
  return Math.round(value * 1e6) / 1e6;
}

/** Orders per-model rows: most expensive first, then most tokens, then provider/model. */
export function compareModelRows(
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

export function emptyFigureSums(): FigureSums {
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

export function addFigureRow(sums: FigureSums, row: FigureRow): void {
  const { status, sessions, ...rest } = row;
  const byStatus = Object.fromEntries(STATS_STATUSES.map((s) => [s, 0])) as Record<
    StatsStatus,
    number
  >;
  byStatus[status] = sessions;
  addFigureTotals(sums, { ...rest, byStatus });
}

/** Sums over a group of sessions of any statuses, with their count per status. */
export type FigureTotals = Omit<FigureRow, 'status' | 'sessions'> & {
  byStatus: Record<StatsStatus, number>;
};

export function addFigureTotals(sums: FigureSums, totals: FigureTotals): void {
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

export function finishFigures(sums: FigureSums): UsageFigures {
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
