import type { Run } from '@cognition/contracts';
import type { ModelContribution } from '@cognition/storage';
import { contributionDelta, runContribution, runTimes } from '@cognition/storage';
import type pg from 'pg';
import { sqliteTimestamp } from '../db/raw-select';
import type { SqliteSession } from '../db/sqlite-connection';

/**
 * `applyRunUsage` (usage-records.ts) for the run writes that run on the driver (run-writes.ts):
 * the same figures, in two statement kinds instead of Prisma's five. The session's row is
 * created or locked, incremented and its dates moved by one `INSERT … ON CONFLICT DO UPDATE`
 * (the conflict branch takes the row lock on PostgreSQL, so writers of one session queue as
 * before; the earliest start and latest activity are compared in SQL instead of read first),
 * then each model's row is incremented the same way.
 *
 * SQLite compares the dates as text: Prisma's adapter and this library both write the fixed
 * `YYYY-MM-DDTHH:MM:SS.mmm+00:00` form, whose text order is its time order.
 */
export const TOTALS_COLUMNS = `session_id, runs, error_count, aborted_count, tokens_in, tokens_out,
  estimated_tokens_in, estimated_tokens_out, cost_usd, unpriced_calls, started_at,
  last_activity_at, ended_at, last_model, last_provider`;

export const TOTALS_UPDATE = `ON CONFLICT (session_id) DO UPDATE SET
    runs = session_usage.runs + excluded.runs,
    error_count = session_usage.error_count + excluded.error_count,
    aborted_count = session_usage.aborted_count + excluded.aborted_count,
    tokens_in = session_usage.tokens_in + excluded.tokens_in,
    tokens_out = session_usage.tokens_out + excluded.tokens_out,
    estimated_tokens_in = session_usage.estimated_tokens_in + excluded.estimated_tokens_in,
    estimated_tokens_out = session_usage.estimated_tokens_out + excluded.estimated_tokens_out,
    cost_usd = session_usage.cost_usd + excluded.cost_usd,
    unpriced_calls = session_usage.unpriced_calls + excluded.unpriced_calls,
    started_at = CASE WHEN session_usage.started_at IS NULL
      OR excluded.started_at < session_usage.started_at
      THEN excluded.started_at ELSE session_usage.started_at END,
    last_activity_at = CASE WHEN session_usage.last_activity_at IS NULL
      OR excluded.last_activity_at > session_usage.last_activity_at
      THEN excluded.last_activity_at ELSE session_usage.last_activity_at END,
    ended_at = excluded.ended_at,
    last_model = COALESCE(excluded.last_model, session_usage.last_model),
    last_provider = COALESCE(excluded.last_provider, session_usage.last_provider)`;

const MODEL_COLUMNS = `session_id, provider, model, calls, tokens_in, tokens_out, cost_usd,
  unpriced_calls`;

const MODEL_UPDATE = `ON CONFLICT (session_id, provider, model) DO UPDATE SET
    calls = session_model_usage.calls + excluded.calls,
    tokens_in = session_model_usage.tokens_in + excluded.tokens_in,
    tokens_out = session_model_usage.tokens_out + excluded.tokens_out,
    cost_usd = session_model_usage.cost_usd + excluded.cost_usd,
    unpriced_calls = session_model_usage.unpriced_calls + excluded.unpriced_calls`;

/** A Date parameter as PostgreSQL's `timestamp(3)` (without time zone) in UTC, as Prisma stores it. */
export function pgTimestamp(param: string): string {
  return `(${param}::timestamptz AT TIME ZONE 'UTC')`;
}

const SQL = {
  sqliteTotals: `INSERT INTO session_usage (${TOTALS_COLUMNS})
    VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?) ${TOTALS_UPDATE}`,
  sqliteModel: `INSERT INTO session_model_usage (${MODEL_COLUMNS})
    VALUES (?, ?, ?, ?, ?, ?, ?, ?) ${MODEL_UPDATE}`,
  postgresTotals: `INSERT INTO session_usage (${TOTALS_COLUMNS})
    VALUES ($1, $2::int, $3::int, $4::int, $5::int, $6::int, $7::int, $8::int,
      $9::double precision, $10::int, ${pgTimestamp('$11')}, ${pgTimestamp('$12')},
      ${pgTimestamp('$13')}, $14, $15) ${TOTALS_UPDATE}`,
  postgresModel: `INSERT INTO session_model_usage (${MODEL_COLUMNS})
    VALUES ($1, $2, $3, $4::int, $5::int, $6::int, $7::double precision, $8::int) ${MODEL_UPDATE}`,
};

interface UsageWrite {
  sessionId: string;
  totals: unknown[];
  models: ModelContribution[];
}

/** The statements' values for one run write; dates as `date` formats them. */
function usageWrite(before: Run | null, after: Run, date: (d: Date) => unknown): UsageWrite {
  const sessionId = after.sessionId;
  const delta = contributionDelta(runContribution(before), runContribution(after));
  const times = runTimes(after);
  return {
    sessionId,
    totals: [
      sessionId,
      delta.runs,
      delta.errors,
      delta.aborted,
      delta.tokensIn,
      delta.tokensOut,
      delta.estimatedTokensIn,
      delta.estimatedTokensOut,
      delta.costUsd,
      delta.unpricedCalls,
      date(times.startedAt),
      date(times.activityAt),
      times.endedAt === null ? null : date(times.endedAt),
      times.lastModel?.model ?? null,
      times.lastModel?.provider ?? null,
    ],
    models: [...delta.models.values()],
  };
}

function modelValues(sessionId: string, model: ModelContribution): unknown[] {
  return [
    sessionId,
    model.provider,
    model.model,
    model.calls,
    model.tokensIn,
    model.tokensOut,
    model.costUsd,
    model.unpricedCalls,
  ];
}

/** Applies one run write to its session's usage records, inside `session`'s open transaction. */
export function applyRunUsageOnSqlite(
  session: SqliteSession,
  before: Run | null,
  after: Run,
): void {
  const write = usageWrite(before, after, sqliteTimestamp);
  session.prepare(SQL.sqliteTotals).run(...write.totals);
  if (write.models.length === 0) return;
  const model = session.prepare(SQL.sqliteModel);
  for (const entry of write.models) model.run(...modelValues(write.sessionId, entry));
}

/** The same on the PostgreSQL client holding the run's transaction. */
export async function applyRunUsageOnPostgres(
  client: pg.PoolClient,
  before: Run | null,
  after: Run,
): Promise<void> {
  const write = usageWrite(before, after, (date) => date);
  await client.query({
    name: 'cognition_usage_totals',
    text: SQL.postgresTotals,
    values: write.totals,
  });
  for (const entry of write.models) {
    await client.query({
      name: 'cognition_usage_model',
      text: SQL.postgresModel,
      values: modelValues(write.sessionId, entry),
    });
  }
}

/** Columns of the model rows as the arrays `postgresUsageCtes` passes them (its last 7 parameters). */
const MODEL_ARRAYS = `unnest($M1::text[], $M2::text[], $M3::int[], $M4::int[], $M5::int[],
  $M6::double precision[], $M7::int[])
  AS m(provider, model, calls, tokens_in, tokens_out, cost_usd, unpriced_calls)`;

/**
 * The usage statements of one run write as data-modifying CTEs (`usage_totals`,
 * `usage_models`) of a PostgreSQL statement in which the CTE `source` yields the written run
 * row: they write only when it does, so a guarded write whose guard fails writes no usage
 * either, and the run and its usage commit as one statement. The model rows travel as arrays,
 * so the statement's text does not depend on their number; its parameters start at `$first`.
 */
export function postgresUsageCtes(source: string, first: number): { sql: string; params: number } {
  const p = (i: number): string => `$${first + i}`;
  const modelParams = MODEL_ARRAYS.replace(/\$M(\d)/g, (_, i: string) => p(14 + Number(i)));
  return {
    sql: `usage_totals AS (
      INSERT INTO session_usage (${TOTALS_COLUMNS})
      SELECT ${p(0)}::text, ${p(1)}::int, ${p(2)}::int, ${p(3)}::int, ${p(4)}::int,
        ${p(5)}::int, ${p(6)}::int, ${p(7)}::int, ${p(8)}::double precision, ${p(9)}::int,
        ${pgTimestamp(p(10))}, ${pgTimestamp(p(11))}, ${pgTimestamp(p(12))}, ${p(13)}::text,
        ${p(14)}::text
      FROM ${source} ${TOTALS_UPDATE}
    ),
    usage_models AS (
      INSERT INTO session_model_usage (${MODEL_COLUMNS})
      SELECT ${p(0)}::text, m.provider, m.model, m.calls, m.tokens_in, m.tokens_out, m.cost_usd,
        m.unpriced_calls
      FROM ${source}, ${modelParams} ${MODEL_UPDATE}
    )`,
    params: 22,
  };
}

/** The values of `postgresUsageCtes` for the write that turns `before` into `after`. */
export function postgresUsageValues(before: Run | null, after: Run): unknown[] {
  const write = usageWrite(before, after, (date) => date);
  const models = write.models;
  return [
    ...write.totals,
    models.map((m) => m.provider),
    models.map((m) => m.model),
    models.map((m) => m.calls),
    models.map((m) => m.tokensIn),
    models.map((m) => m.tokensOut),
    models.map((m) => m.costUsd),
    models.map((m) => m.unpricedCalls),
  ];
}

/**
 * The session totals row a new run adds (`session_usage`'s columns in `TOTALS_COLUMNS` order,
 * dates as `date` formats them); a new run has no model rows yet, so none is returned.
 */
export function newRunUsageTotals(run: Run, date: (d: Date) => unknown): unknown[] {
  return usageWrite(null, run, date).totals;
}
