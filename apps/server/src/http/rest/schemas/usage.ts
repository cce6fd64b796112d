import { AgentNameSchema, FEEDBACK_TEXT_MAX, StatsStatusSchema } from '@cognition/contracts';
import { z } from 'zod';
import { queryInt, queryTime, Timestamp } from './common';

/*
 * Usage, aggregates, feedback and QA. A session's usage and a message's feedback also appear
 * inside the Session and Message bodies.
 */

export const SessionUsageBody = z
  .object({
    tokens_in: z.number().int().min(0),
    tokens_out: z.number().int().min(0),
    estimated_tokens_in: z
      .number()
      .int()
      .min(0)
      .meta({ description: 'Part of tokens_in estimated because the provider reported none' }),
    estimated_tokens_out: z.number().int().min(0),
    cost_usd: z.number().min(0),
    cost_complete: z.boolean().meta({
      description: 'false when some call had no known price (its cost is not in cost_usd)',
    }),
    runs: z.number().int().min(0),
    error_count: z.number().int().min(0),
    aborted_count: z.number().int().min(0),
    last_model: z.string().nullable(),
    last_provider: z.string().nullable(),
    started_at: Timestamp.nullable(),
    last_activity_at: Timestamp.nullable(),
    ended_at: Timestamp.nullable(),
  })
  .meta({ id: 'SessionUsage', description: "A session's usage totals, kept current by every run" });

export const FeedbackBody = z
  .object({
    score: z.number().int().min(1).max(5),
    text: z.string().nullable(),
    created_at: Timestamp,
    updated_at: Timestamp,
  })
  .meta({ id: 'Feedback' });

export const ModelUsageBody = z
  .object({
    provider: z.string(),
    model: z.string(),
    calls: z.number().int().min(0),
    tokens_in: z.number().int().min(0),
    tokens_out: z.number().int().min(0),
    cost_usd: z.number().min(0),
    cost_complete: z.boolean(),
  })
  .meta({ id: 'ModelUsage' });

export const SessionUsageReportBody = z
  .object({
    session_id: z.string(),
    usage: SessionUsageBody,
    models: z.array(ModelUsageBody),
  })
  .meta({ id: 'SessionUsageReport' });

const StatusCounts = z.record(StatsStatusSchema, z.number().int().min(0));

const FiguresShape = {
  sessions: z.object({ total: z.number().int().min(0), by_status: StatusCounts }),
  runs: z.object({
    total: z.number().int().min(0),
    failed: z.number().int().min(0),
    aborted: z.number().int().min(0),
  }),
  tokens_in: z.number().int().min(0),
  tokens_out: z.number().int().min(0),
  estimated_tokens_in: z
    .number()
    .int()
    .min(0)
    .meta({ description: 'Part of tokens_in estimated because the provider reported none' }),
  estimated_tokens_out: z.number().int().min(0),
  cost_usd: z.number().min(0),
  cost_complete: z.boolean(),
  error_count: z.number().int().min(0),
  feedback: z.object({ count: z.number().int().min(0), average_score: z.number().nullable() }),
};

export const StatsBody = z
  .object({
    ...FiguresShape,
    buckets: z
      .array(z.object({ start: Timestamp, ...FiguresShape }))
      .optional()
      .meta({ description: 'With `bucket`: the figures per hour/day of session creation (UTC)' }),
  })
  .meta({ id: 'SessionStats' });

export const CostByModelBody = z
  .object({ models: z.array(ModelUsageBody) })
  .meta({ id: 'CostByModel' });

const aggregateQueryShape = {
  from: queryTime('Sessions created at or after this time').optional(),
  to: queryTime('Sessions created before this time').optional(),
  status: StatsStatusSchema.optional().meta({
    description: '`abandoned`: active sessions idle for abandon_after_seconds',
  }),
  agent_name: AgentNameSchema.optional(),
  abandon_after_seconds: queryInt(
    1,
    365 * 86_400,
    'Idle time after which an active session counts as abandoned (default 1800)',
  ).optional(),
};

export const StatsQuery = z
  .object({
    ...aggregateQueryShape,
    bucket: z.enum(['hour', 'day']).optional().meta({ description: 'Also per hour or day' }),
  })
  .strict();

export const CostByModelQuery = z.object(aggregateQueryShape).strict();

export const FeedbackRequestBody = z
  .object({
    score: z.number().int().min(1).max(5),
    text: z.string().max(FEEDBACK_TEXT_MAX).nullable().optional(),
  })
  .strict()
  .meta({ id: 'FeedbackRequest' });

export const QaQuery = z
  .object({ last_n: queryInt(1, 500, 'Newest completed turns to return (default 10)').optional() })
  .strict();

export const QaListBody = z
  .object({
    entries: z.array(
      z.object({
        qa_id: z.string().meta({ description: 'The id of the assistant message that answered' }),
        time: Timestamp,
        question: z.string(),
        answer: z.string(),
        context: z.array(z.object({ tool_call_id: z.string().nullable(), content: z.string() })),
        feedback_score: z.number().int().nullable(),
        feedback_text: z.string().nullable(),
      }),
    ),
  })
  .meta({ id: 'QaList' });
