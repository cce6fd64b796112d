import type { Run } from '@cognition/contracts';
import { contributionDelta, runContribution, runTimes } from '@cognition/storage';
import type { PrismaTx } from '../db/db';
import type { DatabaseProvider } from '../db/migrate';

/**
 * Locks the session's usage row for the rest of the transaction, creating it when missing (an
 * `INSERT … ON CONFLICT DO UPDATE` takes the row lock on PostgreSQL; SQLite transactions are
 * serialised anyway), so writers of one session's figures queue rather than race.
 */
export async function lockUsageRow(tx: PrismaTx, sessionId: string): Promise<void> {
  await tx.$executeRaw`
    INSERT INTO session_usage (session_id) VALUES (${sessionId})
    ON CONFLICT (session_id) DO UPDATE SET runs = session_usage.runs`;
}

/** Locks a run row for the rest of the transaction (PostgreSQL; SQLite is serialised). */
export async function lockRunRow(
  tx: PrismaTx,
  provider: DatabaseProvider,
  runId: string,
): Promise<void> {
  if (provider === 'postgresql') {
    await tx.$queryRaw`SELECT id FROM runs WHERE id = ${runId} FOR UPDATE`;
  }
}

/**
 * Applies one run write to its session's usage records, in the caller's transaction: the run's
 * contribution after the write minus the one before (null: the run is new) is added to the
 * session totals and per-model rows with atomic increments, and the dates move (first start,
 * last activity, end of the latest run) along with the last model.
 */
export async function applyRunUsage(tx: PrismaTx, before: Run | null, after: Run): Promise<void> {
  const sessionId = after.sessionId;
  const delta = contributionDelta(runContribution(before), runContribution(after));
  await lockUsageRow(tx, sessionId);
  await tx.$executeRaw`
    UPDATE session_usage SET
      runs = runs + ${delta.runs},
      error_count = error_count + ${delta.errors},
      aborted_count = aborted_count + ${delta.aborted},
      tokens_in = tokens_in + ${delta.tokensIn},
      tokens_out = tokens_out + ${delta.tokensOut},
      estimated_tokens_in = estimated_tokens_in + ${delta.estimatedTokensIn},
      estimated_tokens_out = estimated_tokens_out + ${delta.estimatedTokensOut},
      cost_usd = cost_usd + ${delta.costUsd},
      unpriced_calls = unpriced_calls + ${delta.unpricedCalls}
    WHERE session_id = ${sessionId}`;
  for (const model of delta.models.values()) {
    await tx.$executeRaw`
      INSERT INTO session_model_usage
        (session_id, provider, model, calls, tokens_in, tokens_out, cost_usd, unpriced_calls)
      VALUES (${sessionId}, ${model.provider}, ${model.model}, ${model.calls}, ${model.tokensIn},
        ${model.tokensOut}, ${model.costUsd}, ${model.unpricedCalls})
      ON CONFLICT (session_id, provider, model) DO UPDATE SET
        calls = session_model_usage.calls + excluded.calls,
        tokens_in = session_model_usage.tokens_in + excluded.tokens_in,
        tokens_out = session_model_usage.tokens_out + excluded.tokens_out,
        cost_usd = session_model_usage.cost_usd + excluded.cost_usd,
        unpriced_calls = session_model_usage.unpriced_calls + excluded.unpriced_calls`;
  }
  const times = runTimes(after);
  const row = await tx.sessionUsage.findUniqueOrThrow({
    where: { sessionId },
    select: { startedAt: true, lastActivityAt: true },
  });
  await tx.sessionUsage.update({
    where: { sessionId },
    data: {
      ...(row.startedAt === null || times.startedAt < row.startedAt
        ? { startedAt: times.startedAt }
        : {}),
      ...(row.lastActivityAt === null || times.activityAt > row.lastActivityAt
        ? { lastActivityAt: times.activityAt }
        : {}),
      endedAt: times.endedAt,
      ...(times.lastModel
        ? { lastModel: times.lastModel.model, lastProvider: times.lastModel.provider }
        : {}),
    },
  });
}
