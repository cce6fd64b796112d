import { FeedbackInputSchema, IdSchema } from '@cognition/contracts';
import { z } from 'zod';

export const SetFeedbackApiInputSchema = FeedbackInputSchema.extend({
  sessionId: IdSchema,
  messageId: IdSchema,
}).strict();
export type SetFeedbackApiInput = z.output<typeof SetFeedbackApiInputSchema>;

export const DeleteFeedbackApiInputSchema = z
  .object({ sessionId: IdSchema, messageId: IdSchema })
  .strict();
export type DeleteFeedbackApiInput = z.output<typeof DeleteFeedbackApiInputSchema>;
