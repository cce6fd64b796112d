import { z } from 'zod';

/* The usage and feedback shapes that also appear inside Session and Message bodies. */

const Timestamp = z.string().meta({ format: 'date-time' });

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
