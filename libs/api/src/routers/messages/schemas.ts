import {
  IdSchema,
  MESSAGE_CONTENT_MAX,
  MessagePageQuerySchema,
  MultitaskStrategySchema,
  StringMapSchema,
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
 * `messages.send`: the same limits the runtime enforces, checked here first so a bad field is a
 * 422 naming it before anything is stored.
 */
export const SendMessageApiInputSchema = z
  .object({
    sessionId: IdSchema,
    content: z.string().min(1).max(MESSAGE_CONTENT_MAX),
    parentId: IdSchema.nullish(),
    callbackUrl: z
      .url({ protocol: /^https?$/, error: 'must be an http or https URL' })
      .max(2048)
      .nullish(),
    idempotencyKey: z.string().min(1).max(256).nullish(),
    metadata: StringMapSchema.optional(),
    /** While the session has an active run: `reject` (default), `enqueue`, `interrupt`, `rollback`. */
    multitaskStrategy: MultitaskStrategySchema.optional(),
  })
  .strict();
export type SendMessageApiInput = z.output<typeof SendMessageApiInputSchema>;
