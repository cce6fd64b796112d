import {
  CallbackConfigSchema,
  ClientToolsSchema,
  IdSchema,
  MessagePageQuerySchema,
  SendMessageFieldsSchema,
} from '@cognition/contracts';
import { z } from 'zod';

/** `order` defaults to `asc` (thread order, oldest first) on tRPC; REST defaults to `desc`. */
export const ListMessagesApiInputSchema = MessagePageQuerySchema.extend({
  sessionId: IdSchema,
}).strict();

export const RebuildMessagesApiInputSchema = z.object({ sessionId: IdSchema }).strict();
export type RebuildMessagesApiInput = z.output<typeof RebuildMessagesApiInputSchema>;
export type ListMessagesApiInput = z.output<typeof ListMessagesApiInputSchema>;

export const GetMessageApiInputSchema = z
  .object({ sessionId: IdSchema, messageId: IdSchema })
  .strict();
export type GetMessageApiInput = z.output<typeof GetMessageApiInputSchema>;

/**
 * `messages.send`: the contract's send fields (the runtime checks the same schema), checked here
 * first so a bad field is a 422 naming it before anything is stored; and `clientTools`, tools
 * the client runs itself (AG-UI's frontend tools), and `callbackConfig`, how the callback is sent
 * (an A2A push notification config's) — neither is a REST field.
 */
export const SendMessageApiInputSchema = SendMessageFieldsSchema.extend({
  sessionId: IdSchema,
  clientTools: ClientToolsSchema.optional(),
  callbackConfig: CallbackConfigSchema.optional(),
});
export type SendMessageApiInput = z.output<typeof SendMessageApiInputSchema>;
