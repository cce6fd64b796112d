import { z } from 'zod';
import { ErrorCodeSchema } from './errors';
import { IdSchema } from './common';
import { ModelUsageSchema } from './usage';

/** `queued` and `running` are active; a session has at most one active run at a time. */
export const RunStatusSchema = z.enum([
  'queued',
  'running',
  'completed',
  'failed',
  'aborted',
  'interrupted',
]);
export type RunStatus = z.infer<typeof RunStatusSchema>;
export const ACTIVE_RUN_STATUSES: readonly RunStatus[] = ['queued', 'running'];
export function isActiveRunStatus(status: RunStatus): boolean {
  return status === 'queued' || status === 'running';
}

export const UsageSchema = z.object({
  inputTokens: z.number().int().min(0),
  outputTokens: z.number().int().min(0),
  /** null when the model's price is unknown: never reported as zero. */
  costUsd: z.number().min(0).nullable(),
  model: z.string().nullable(),
  provider: z.string().nullable(),
  /** true when the provider reported no usage and the figures are estimated. */
  estimated: z.boolean().default(false),
  /**
   * Per provider/model (a run that used several models has several entries). Absent on runs
   * recorded before it existed: the run then counts as one call of `provider`/`model`.
   */
  models: z.array(ModelUsageSchema).optional(),
});
export type Usage = z.infer<typeof UsageSchema>;

export const RunErrorSchema = z.object({
  code: ErrorCodeSchema,
  message: z.string(),
});
export type RunError = z.infer<typeof RunErrorSchema>;

export const RunSchema = z.object({
  id: IdSchema,
  sessionId: IdSchema,
  status: RunStatusSchema,
  /** The user message that started the run. */
  inputMessageId: IdSchema.nullable(),
  idempotencyKey: z.string().nullable(),
  usage: UsageSchema.nullable(),
  error: RunErrorSchema.nullable(),
  createdAt: z.date(),
  startedAt: z.date().nullable(),
  finishedAt: z.date().nullable(),
  updatedAt: z.date(),
});
export type Run = z.infer<typeof RunSchema>;

export const CreateRunInputSchema = z
  .object({
    id: IdSchema.optional(),
    sessionId: IdSchema,
    status: z.enum(['queued', 'running']).default('queued'),
    inputMessageId: IdSchema.nullable().optional(),
    idempotencyKey: z.string().min(1).max(256).nullable().optional(),
  })
  .strict();
export type CreateRunInput = z.input<typeof CreateRunInputSchema>;

export const UpdateRunInputSchema = z
  .object({
    status: RunStatusSchema.optional(),
    usage: UsageSchema.nullable().optional(),
    error: RunErrorSchema.nullable().optional(),
    startedAt: z.date().nullable().optional(),
    finishedAt: z.date().nullable().optional(),
  })
  .strict();
export type UpdateRunInput = z.input<typeof UpdateRunInputSchema>;
