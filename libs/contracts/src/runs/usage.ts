import { z } from 'zod';
import type { Session } from '../sessions/session';
import { AgentNameSchema, SessionStatusSchema } from '../sessions/session';
import { StringMapSchema } from '../common';

/**
 * What one model contributed to one run: a run that delegated to a subagent or summarised its
 * context with another model has one entry per provider/model, so mixed-model sessions
 * attribute tokens and cost to the model that spent them.
 */
export const ModelUsageSchema = z.object({
  provider: z.string().min(1).max(128),
  model: z.string().min(1).max(256),
  calls: z.number().int().min(0),
  inputTokens: z.number().int().min(0),
  outputTokens: z.number().int().min(0),
  /** Input tokens the provider served from its prompt cache (priced at the cached rate). */
  cachedInputTokens: z.number().int().min(0).default(0),
  /** null when this model's price is unknown: never counted as zero. */
  costUsd: z.number().min(0).nullable(),
  /** true when at least one call reported no usage and its tokens were estimated. */
  estimated: z.boolean().default(false),
});
export type ModelUsage = z.infer<typeof ModelUsageSchema>;

/**
 * A session's usage totals, kept current with every run in the same write as the run
 * (conformance-tested on every backend). `costComplete` is false as soon as one model call had
 * an unknown price; `costUsd` then sums the priced calls only. `estimatedTokensIn/Out` are the
 * part of `tokensIn/Out` that was estimated because the provider reported none.
 * `startedAt` is the start of the first run, `lastActivityAt` the last change of any run,
 * `endedAt` the end of the latest run (null while a run is active or before the first run).
 */
export const SessionUsageSchema = z.object({
  tokensIn: z.number().int().min(0),
  tokensOut: z.number().int().min(0),
  estimatedTokensIn: z.number().int().min(0),
  estimatedTokensOut: z.number().int().min(0),
  costUsd: z.number().min(0),
  costComplete: z.boolean(),
  runs: z.number().int().min(0),
  errorCount: z.number().int().min(0),
  abortedCount: z.number().int().min(0),
  lastModel: z.string().nullable(),
  lastProvider: z.string().nullable(),
  startedAt: z.date().nullable(),
  lastActivityAt: z.date().nullable(),
  endedAt: z.date().nullable(),
});
export type SessionUsage = z.infer<typeof SessionUsageSchema>;

/** The usage of a session before its first run. */
export const EMPTY_SESSION_USAGE: SessionUsage = Object.freeze({
  tokensIn: 0,
  tokensOut: 0,
  estimatedTokensIn: 0,
  estimatedTokensOut: 0,
  costUsd: 0,
  costComplete: true,
  runs: 0,
  errorCount: 0,
  abortedCount: 0,
  lastModel: null,
  lastProvider: null,
  startedAt: null,
  lastActivityAt: null,
  endedAt: null,
});

/** One provider/model of a session (or of an aggregate): calls, tokens and cost. */
export const ModelUsageTotalsSchema = z.object({
  provider: z.string(),
  model: z.string(),
  calls: z.number().int().min(0),
  tokensIn: z.number().int().min(0),
  tokensOut: z.number().int().min(0),
  costUsd: z.number().min(0),
  /** false when some calls of this model had no known price. */
  costComplete: z.boolean(),
});
export type ModelUsageTotals = z.infer<typeof ModelUsageTotalsSchema>;

export interface SessionUsageReport {
  sessionId: string;
  usage: SessionUsage;
  /** One row per provider/model, most expensive first (then most tokens, then name). */
  models: ModelUsageTotals[];
}

/** A session status as the aggregates count it: `abandoned` is derived at read time. */
export const StatsStatusSchema = z.enum([...SessionStatusSchema.options, 'abandoned']);
export type StatsStatus = z.infer<typeof StatsStatusSchema>;

/** Default idle time after which an `active` session counts as `abandoned` in the aggregates. */
export const ABANDON_AFTER_SECONDS_DEFAULT = 1800;

const usageFilterShape = {
  from: z.date().optional(),
  to: z.date().optional(),
  status: StatsStatusSchema.optional(),
  agentName: AgentNameSchema.optional(),
  metadata: StringMapSchema.optional(),
  abandonAfterSeconds: z
    .number()
    .int()
    .min(1)
    .max(365 * 86_400)
    .default(ABANDON_AFTER_SECONDS_DEFAULT),
};

function fromBeforeTo(q: { from?: Date | undefined; to?: Date | undefined }): boolean {
  return !q.from || !q.to || q.from.getTime() < q.to.getTime();
}

/**
 * Filters of the aggregates (stats, cost by model). `from`/`to` bound the session's creation
 * time (`from` inclusive, `to` exclusive); every given filter must match, and only sessions in
 * the caller's scope are counted. `status: 'abandoned'` selects active sessions idle (no run
 * activity, or no update when they never ran) for `abandonAfterSeconds`; `status: 'active'`
 * then selects the others.
 */
export const UsageQuerySchema = z
  .object(usageFilterShape)
  .strict()
  .refine(fromBeforeTo, { message: 'must be after from', path: ['to'] });
export type UsageQuery = z.input<typeof UsageQuerySchema>;

export const StatsQuerySchema = z
  .object({
    ...usageFilterShape,
    /** Also return the figures per hour or day of session creation (UTC). */
    bucket: z.enum(['hour', 'day']).optional(),
  })
  .strict()
  .refine(fromBeforeTo, { message: 'must be after from', path: ['to'] });
export type StatsQuery = z.input<typeof StatsQuerySchema>;

/** The figures of a set of sessions. */
export interface UsageFigures {
  sessions: { total: number; byStatus: Record<StatsStatus, number> };
  runs: { total: number; failed: number; aborted: number };
  tokensIn: number;
  tokensOut: number;
  /** The part of tokensIn/Out that was estimated (the provider reported none). */
  estimatedTokensIn: number;
  estimatedTokensOut: number;
  costUsd: number;
  costComplete: boolean;
  errorCount: number;
  feedback: { count: number; averageScore: number | null };
}

export interface UsageStats extends UsageFigures {
  /** With `bucket`: the same figures per bucket start (UTC), oldest first, empty buckets left out. */
  buckets?: (UsageFigures & { start: Date })[];
}

/** One row of cost-by-model: most expensive first. */
export type CostByModelRow = ModelUsageTotals;

/** A session as the API returns it: with its usage totals. */
export type SessionWithUsage = Session & { usage: SessionUsage };
