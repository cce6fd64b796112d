import type {
  CostByModelRow,
  MessageFeedback,
  QaEntry,
  SessionUsage,
  SessionUsageReport,
  StringMap,
  UsageFigures,
  UsageStats,
} from '@cognition/contracts';
import type { z } from 'zod';
import type {
  CostByModelQuery,
  FeedbackBody,
  ModelUsageBody,
  QaListBody,
  SessionUsageReportBody,
  StatsBody,
  StatsQuery,
} from './schemas/usage';
import type { SessionUsageBody } from './schemas/usage';

export function usageToBody(usage: SessionUsage): z.infer<typeof SessionUsageBody> {
  return {
    tokens_in: usage.tokensIn,
    tokens_out: usage.tokensOut,
    estimated_tokens_in: usage.estimatedTokensIn,
    estimated_tokens_out: usage.estimatedTokensOut,
    cost_usd: usage.costUsd,
    cost_complete: usage.costComplete,
    runs: usage.runs,
    error_count: usage.errorCount,
    aborted_count: usage.abortedCount,
    last_model: usage.lastModel,
    last_provider: usage.lastProvider,
    started_at: usage.startedAt?.toISOString() ?? null,
    last_activity_at: usage.lastActivityAt?.toISOString() ?? null,
    ended_at: usage.endedAt?.toISOString() ?? null,
  };
}

export function modelRowToBody(row: CostByModelRow): z.infer<typeof ModelUsageBody> {
  return {
    provider: row.provider,
    model: row.model,
    calls: row.calls,
    tokens_in: row.tokensIn,
    tokens_out: row.tokensOut,
    cost_usd: row.costUsd,
    cost_complete: row.costComplete,
  };
}

export function usageReportToBody(
  report: SessionUsageReport,
): z.infer<typeof SessionUsageReportBody> {
  return {
    session_id: report.sessionId,
    usage: usageToBody(report.usage),
    models: report.models.map(modelRowToBody),
  };
}

function figuresToBody(figures: UsageFigures) {
  return {
    sessions: {
      total: figures.sessions.total,
      by_status: figures.sessions.byStatus,
    },
    runs: { ...figures.runs },
    tokens_in: figures.tokensIn,
    tokens_out: figures.tokensOut,
    estimated_tokens_in: figures.estimatedTokensIn,
    estimated_tokens_out: figures.estimatedTokensOut,
    cost_usd: figures.costUsd,
    cost_complete: figures.costComplete,
    error_count: figures.errorCount,
    feedback: { count: figures.feedback.count, average_score: figures.feedback.averageScore },
  };
}

export function statsToBody(stats: UsageStats): z.infer<typeof StatsBody> {
  return {
    ...figuresToBody(stats),
    ...(stats.buckets
      ? {
          buckets: stats.buckets.map((bucket) => ({
            start: bucket.start.toISOString(),
            ...figuresToBody(bucket),
          })),
        }
      : {}),
  };
}

/** The aggregate filters of a REST query (plus its `metadata.<key>` predicates). */
export function aggregateInput(
  query: z.output<typeof CostByModelQuery> | z.output<typeof StatsQuery>,
  metadata: StringMap,
) {
  return {
    ...(query.from !== undefined ? { from: query.from } : {}),
    ...(query.to !== undefined ? { to: query.to } : {}),
    ...(query.status !== undefined ? { status: query.status } : {}),
    ...(query.agent_name !== undefined ? { agentName: query.agent_name } : {}),
    ...(query.abandon_after_seconds !== undefined
      ? { abandonAfterSeconds: query.abandon_after_seconds }
      : {}),
    ...('bucket' in query && query.bucket !== undefined ? { bucket: query.bucket } : {}),
    ...(Object.keys(metadata).length > 0 ? { metadata } : {}),
  };
}

export function feedbackToBody(feedback: MessageFeedback): z.infer<typeof FeedbackBody> {
  return {
    score: feedback.score,
    text: feedback.text,
    created_at: feedback.createdAt.toISOString(),
    updated_at: feedback.updatedAt.toISOString(),
  };
}

export function qaToBody(entries: QaEntry[]): z.infer<typeof QaListBody> {
  return {
    entries: entries.map((entry) => ({
      qa_id: entry.qaId,
      time: entry.time.toISOString(),
      question: entry.question,
      answer: entry.answer,
      context: entry.context.map((c) => ({ tool_call_id: c.toolCallId, content: c.content })),
      feedback_score: entry.feedbackScore,
      feedback_text: entry.feedbackText,
    })),
  };
}
