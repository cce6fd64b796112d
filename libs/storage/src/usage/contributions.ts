import type { Run } from '@cognition/contracts';

/*
 * The write side of the usage arithmetic both backends share (pure, no I/O): what a run adds to
 * its session's records. Each backend applies `contributionDelta(before, after)` on every run
 * write, in the run's transaction (memory: its maps; Prisma: SQL increments).
 */

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

function modelKey(provider: string, model: string): string {
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
