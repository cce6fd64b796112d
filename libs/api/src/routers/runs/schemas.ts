import { EventIdSchema, IdSchema } from '@cognition/contracts';
import { z } from 'zod';

export const RunSessionInputSchema = z.object({ sessionId: IdSchema }).strict();
export type RunSessionInput = z.output<typeof RunSessionInputSchema>;

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
