import {
  EventIdSchema,
  IdSchema,
  ResumeRunBodySchema,
  RunStatusSchema,
} from '@cognition/contracts';
import { z } from 'zod';

export const RunSessionInputSchema = z.object({ sessionId: IdSchema }).strict();
export type RunSessionInput = z.output<typeof RunSessionInputSchema>;

/** `runs.list`: a session's runs, optionally only those in one status (e.g. `requires_action`). */
export const ListRunsApiInputSchema = z
  .object({ sessionId: IdSchema, status: RunStatusSchema.optional() })
  .strict();
export type ListRunsApiInput = z.output<typeof ListRunsApiInputSchema>;

/** `runs.resume`: one decision per tool call the paused run waits on. */
export const ResumeRunApiInputSchema = ResumeRunBodySchema.extend({
  sessionId: IdSchema,
  runId: IdSchema,
}).strict();
export type ResumeRunApiInput = z.output<typeof ResumeRunApiInputSchema>;

export const GetRunApiInputSchema = z.object({ sessionId: IdSchema, runId: IdSchema }).strict();
export type GetRunApiInput = z.output<typeof GetRunApiInputSchema>;

/**
 * `runs.events`. `lastEventId` is what tRPC's `httpSubscriptionLink` puts back into the input on
 * a reconnect (the id of the last tracked event it received; the server also folds a
 * `Last-Event-ID` header into it), so resuming needs nothing from the caller.
 */
export const RunEventsApiInputSchema = z
  .object({
    sessionId: IdSchema,
    runId: IdSchema.optional(),
    lastEventId: EventIdSchema.nullish(),
  })
  .strict();
export type RunEventsApiInput = z.output<typeof RunEventsApiInputSchema>;
