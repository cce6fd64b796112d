import type {
  CostByModelRow,
  SessionUsage,
  SessionUsageReport,
  StatsQuery,
  StatsStatus,
  UsageQuery,
  UsageStats,
} from '@cognition/contracts';
import {
  EMPTY_SESSION_USAGE,
  IdSchema,
  StatsQuerySchema,
  UsageQuerySchema,
} from '@cognition/contracts';
import type { BucketedTotals, Scope, UsageStore } from '@cognition/storage';
import {
  costByModelRows,
  parseInput,
  sessionModelRows,
  sessionUsageOf,
  STATS_STATUSES,
  usageStatsOf,
} from '@cognition/storage';
import type { z } from 'zod';
import type { PrismaDb } from '../db/db';
import { guard } from '../db/errors';
import { scopeWhere } from '../mapping';
import type { DatabaseProvider } from '../db/migrate';
import { parseScope } from '../sessions/session-store';
import { num, sessionConditions, SqlBuilder, statusCondition, whereClause } from './sql-filters';

const IdsSchema = IdSchema.array().max(10_000);

type StatsQueryParsed = z.output<typeof StatsQuerySchema>;
type UsageQueryParsed = z.output<typeof UsageQuerySchema>;

interface FigureQueryRow {
  bucket: unknown;
  sessions: unknown;
  [statusCount: `st_${string}`]: unknown;
  runs: unknown;
  failed: unknown;
  aborted: unknown;
  tokens_in: unknown;
  tokens_out: unknown;
  estimated_in: unknown;
  estimated_out: unknown;
  cost_usd: unknown;
  unpriced: unknown;
  feedback_count: unknown;
  feedback_sum: unknown;
}

/**
 * Usage records and aggregates on SQLite and PostgreSQL. The aggregates are one GROUP BY over
 * sessions LEFT JOIN session_usage (one row per session, kept current by the run store), with
 * scope and metadata as indexed EXISTS predicates, so they read no run rows at all.
 */
export class PrismaUsageStore implements UsageStore {
  constructor(
    private readonly db: PrismaDb,
    private readonly provider: DatabaseProvider,
  ) {}

  async get(sessionId: string, scope: Scope): Promise<SessionUsageReport | null> {
    const scopes = parseScope(scope);
    return guard('get session usage', async () => {
      const session = await this.db.session.findFirst({
        where: { id: sessionId, AND: scopeWhere(scopes) },
        select: { id: true, usage: true, modelUsage: true },
      });
      if (!session) return null;
      return {
        sessionId,
        usage: session.usage ? sessionUsageOf(session.usage) : { ...EMPTY_SESSION_USAGE },
        models: sessionModelRows(session.modelUsage),
      };
    });
  }

  async totals(sessionIds: readonly string[]): Promise<Map<string, SessionUsage>> {
    const ids = parseInput(IdsSchema, sessionIds, 'session ids');
    return guard('get usage totals', async () => {
      if (ids.length === 0) return new Map<string, SessionUsage>();
      const rows = await this.db.sessionUsage.findMany({ where: { sessionId: { in: ids } } });
      return new Map(rows.map((row) => [row.sessionId, sessionUsageOf(row)]));
    });
  }

  async stats(query: StatsQuery, scope: Scope, now: Date = new Date()): Promise<UsageStats> {
    const q = parseInput(StatsQuerySchema, query, 'stats query');
    const scopes = parseScope(scope);
    return guard('compute stats', async () => {
      const { text, params } = statsStatement(this.provider, q, scopes, now);
      const rows = await this.db.$queryRawUnsafe<FigureQueryRow[]>(text, ...params);
      const groups: BucketedTotals[] = [];
      for (const row of rows) {
        if (num(row.sessions) === 0) continue;
        const totals = {
          byStatus: Object.fromEntries(
            STATS_STATUSES.map((status) => [status, num(row[`st_${status}`])]),
          ) as Record<StatsStatus, number>,
          runs: num(row.runs),
          failed: num(row.failed),
          aborted: num(row.aborted),
          tokensIn: num(row.tokens_in),
          tokensOut: num(row.tokens_out),
          estimatedTokensIn: num(row.estimated_in),
          estimatedTokensOut: num(row.estimated_out),
          costUsd: num(row.cost_usd),
          unpricedCalls: num(row.unpriced),
          feedbackCount: num(row.feedback_count),
          feedbackScoreSum: num(row.feedback_sum),
        };
        groups.push({ totals, start: q.bucket ? this.bucketTime(row.bucket, q.bucket) : null });
      }
      return usageStatsOf(groups, q.bucket !== undefined);
    });
  }

  async costByModel(
    query: UsageQuery,
    scope: Scope,
    now: Date = new Date(),
  ): Promise<CostByModelRow[]> {
    const q = parseInput(UsageQuerySchema, query, 'cost-by-model query');
    const scopes = parseScope(scope);
    return guard('compute cost by model', async () => {
      const { text, params } = costByModelStatement(this.provider, q, scopes, now);
      const rows = await this.db.$queryRawUnsafe<
        {
          provider: string;
          model: string;
          calls: unknown;
          tokens_in: unknown;
          tokens_out: unknown;
          cost_usd: unknown;
          unpriced: unknown;
        }[]
      >(text, ...params);
      return costByModelRows(
        rows.map((row) => ({
          provider: row.provider,
          model: row.model,
          calls: num(row.calls),
          tokensIn: num(row.tokens_in),
          tokensOut: num(row.tokens_out),
          costUsd: num(row.cost_usd),
          unpricedCalls: num(row.unpriced),
        })),
      );
    });
  }

  /** The bucket value of a row as a Date (PostgreSQL: a timestamp; SQLite: an ISO prefix). */
  private bucketTime(value: unknown, bucket: 'hour' | 'day'): Date {
    if (value instanceof Date) return value;
    const text = String(value);
    return new Date(bucket === 'hour' ? `${text}:00:00.000Z` : `${text}T00:00:00.000Z`);
  }
}

/** A raw statement and its parameters. */
export interface SqlStatement {
  text: string;
  params: unknown[];
}

function bucketExpr(provider: DatabaseProvider, bucket: 'hour' | 'day'): string {
  if (provider === 'postgresql') return `date_trunc('${bucket}', s.created_at)`;
  return bucket === 'hour' ? 'substr(s.created_at, 1, 13)' : 'substr(s.created_at, 1, 10)';
}

/**
 * The stats query: one GROUP BY (bucket, status) over sessions LEFT JOIN session_usage (one row
 * per session), with scope and metadata as EXISTS predicates. Exported for the benchmark's
 * query plans.
 */
export function statsStatement(
  provider: DatabaseProvider,
  q: StatsQueryParsed,
  scopes: Record<string, string>,
  now: Date,
): SqlStatement {
  const sql = new SqlBuilder(provider);
  const idleSince = new Date(now.getTime() - q.abandonAfterSeconds * 1000);
  const bucket = q.bucket ? bucketExpr(provider, q.bucket) : 'NULL';
  const counts = STATS_STATUSES.map(
    (status) =>
      `SUM(CASE WHEN ${statusCondition(sql, status, idleSince)} THEN 1 ELSE 0 END) AS st_${status}`,
  ).join(',\n      ');
  const where = whereClause(sessionConditions(sql, scopes, q, now));
  // Counts per status are conditional sums rather than a GROUP BY status: one aggregate row
  // (per bucket) needs no sort, where grouping by the status expression made PostgreSQL sort
  // every matching session.
  const text = `
    SELECT ${bucket} AS bucket, COUNT(*) AS sessions,
      ${counts},
      SUM(COALESCE(u.runs, 0)) AS runs, SUM(COALESCE(u.error_count, 0)) AS failed,
      SUM(COALESCE(u.aborted_count, 0)) AS aborted,
      SUM(COALESCE(u.tokens_in, 0)) AS tokens_in, SUM(COALESCE(u.tokens_out, 0)) AS tokens_out,
      SUM(COALESCE(u.estimated_tokens_in, 0)) AS estimated_in,
      SUM(COALESCE(u.estimated_tokens_out, 0)) AS estimated_out,
      SUM(COALESCE(u.cost_usd, 0)) AS cost_usd, SUM(COALESCE(u.unpriced_calls, 0)) AS unpriced,
      SUM(COALESCE(u.feedback_count, 0)) AS feedback_count,
      SUM(COALESCE(u.feedback_score_sum, 0)) AS feedback_sum
    FROM sessions s LEFT JOIN session_usage u ON u.session_id = s.id
    ${where}
    ${q.bucket ? 'GROUP BY 1' : ''}`;
  return { text, params: sql.params };
}

/** The cost-by-model query: per-model rows of the matching sessions, grouped. */
export function costByModelStatement(
  provider: DatabaseProvider,
  q: UsageQueryParsed,
  scopes: Record<string, string>,
  now: Date,
): SqlStatement {
  const sql = new SqlBuilder(provider);
  const where = whereClause(sessionConditions(sql, scopes, q, now));
  const usageJoin =
    q.status !== undefined ? 'LEFT JOIN session_usage u ON u.session_id = s.id' : '';
  const text = `
    SELECT m.provider AS provider, m.model AS model, SUM(m.calls) AS calls,
      SUM(m.tokens_in) AS tokens_in, SUM(m.tokens_out) AS tokens_out,
      SUM(m.cost_usd) AS cost_usd, SUM(m.unpriced_calls) AS unpriced
    FROM session_model_usage m JOIN sessions s ON s.id = m.session_id ${usageJoin}
    ${where}
    GROUP BY m.provider, m.model`;
  return { text, params: sql.params };
}
