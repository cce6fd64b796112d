import {
  ErrorCodeSchema,
  EventIdSchema,
  IdSchema,
  MultitaskStrategySchema,
  PendingActionSchema,
  ResumeRunBodySchema,
  RunStatusSchema,
} from '@cognition/contracts';
import { z } from 'zod';
import { Timestamp } from './common';

/* Runs: their rows, their events (SSE), abort and resume. */

const UsageBody = z
  .object({
    input_tokens: z.number().int().min(0),
    output_tokens: z.number().int().min(0),
    cost_usd: z.number().min(0).nullable().meta({ description: 'null when the price is unknown' }),
    model: z.string().nullable(),
    provider: z.string().nullable(),
    estimated: z.boolean().meta({ description: 'true when the provider reported no usage' }),
  })
  .meta({ id: 'Usage' });

export const RunBody = z
  .object({
    id: IdSchema,
    session_id: IdSchema,
    status: RunStatusSchema,
    input_message_id: IdSchema.nullable().meta({
      description: 'null while the run is pending (its message enters the history when it starts)',
    }),
    idempotency_key: z.string().nullable(),
    multitask_strategy: MultitaskStrategySchema.nullable().meta({
      description: 'How it was sent while another run was active (null: the session was idle)',
    }),
    supersedes_run_id: IdSchema.nullable().meta({
      description: 'The run that was active when this one was sent',
    }),
    pending_action: PendingActionSchema.nullable().meta({
      description:
        'While the run is `requires_action`: the tool calls it waits for a decision on, each ' +
        'with the decisions allowed (resume with POST /sessions/{id}/runs/{run_id}/resume)',
    }),
    usage: UsageBody.nullable(),
    error: z.object({ code: ErrorCodeSchema, message: z.string() }).nullable(),
    created_at: Timestamp,
    started_at: Timestamp.nullable(),
    finished_at: Timestamp.nullable(),
    updated_at: Timestamp,
  })
  .meta({ id: 'Run' });

const CallbackAttemptBody = z
  .object({
    delivery_id: z.string(),
    url: z.string(),
    attempt: z.number().int().min(1),
    started_at: Timestamp,
    duration_ms: z.number().int().min(0),
    status: z.number().int().nullable().meta({ description: 'null when no response arrived' }),
    ok: z.boolean(),
    error: z.string().nullable(),
  })
  .meta({ id: 'CallbackAttempt' });

export const RunDetailBody = RunBody.extend({
  callback_attempts: z.array(CallbackAttemptBody).meta({
    description: 'Completion-callback delivery attempts recorded on the run, oldest first',
  }),
}).meta({ id: 'RunDetail' });

export const RunListBody = z.object({ runs: z.array(RunBody) }).meta({ id: 'RunList' });

export const RunListQuery = z
  .object({
    status: RunStatusSchema.optional().meta({
      description: 'Only runs in this status (`requires_action`: those waiting for a decision)',
    }),
  })
  .strict();

/** Body of POST /sessions/{id}/runs/{run_id}/resume. */
export const ResumeRunBody = ResumeRunBodySchema.meta({ id: 'ResumeRun' });

export const AbortBody = z
  .object({
    aborted: z.boolean().meta({ description: 'true when a running run was cancelled' }),
    run: RunBody.nullable().meta({ description: 'The run that was active; null when none was' }),
  })
  .meta({ id: 'AbortResult' });

export const RunIdParams = z.object({
  id: IdSchema.meta({ description: 'Session id' }),
  run_id: IdSchema.meta({ description: 'Run id' }),
});

/** Resume cursor for the SSE routes; the `Last-Event-ID` header carries the same value. */
export const StreamQuery = z
  .object({
    last_event_id: EventIdSchema.optional().meta({
      description: 'Resume after this event id (alternative to the Last-Event-ID header)',
    }),
  })
  .strict();

export type RunBodyT = z.infer<typeof RunBody>;

export type RunDetailBodyT = z.infer<typeof RunDetailBody>;
