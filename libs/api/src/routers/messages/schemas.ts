import { IdSchema, MessagePageQuerySchema } from '@cognition/contracts';
import { z } from 'zod';

export const ListMessagesApiInputSchema = MessagePageQuerySchema.extend({
  sessionId: IdSchema,
}).strict();
export type ListMessagesApiInput = z.output<typeof ListMessagesApiInputSchema>;

export const GetMessageApiInputSchema = z
  .object({ sessionId: IdSchema, messageId: IdSchema })
  .strict();
export type GetMessageApiInput = z.output<typeof GetMessageApiInputSchema>;
