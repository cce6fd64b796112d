import { z } from 'zod';
import { IdSchema, PageQuerySchema, StringMapSchema } from '../common';
import { MessageFeedbackSchema } from './feedback';

export const MessageRoleSchema = z.enum(['user', 'assistant', 'system', 'tool']);
export type MessageRole = z.infer<typeof MessageRoleSchema>;

export const ToolCallSchema = z.object({
  id: z.string().min(1).max(256),
  name: z.string().min(1).max(256),
  args: z.record(z.string(), z.unknown()),
});
export type ToolCall = z.infer<typeof ToolCallSchema>;

/** Largest message content accepted (characters). */
export const MESSAGE_CONTENT_MAX = 2_000_000;

/**
 * One message of a session: a row of the read projection of the session's checkpoint thread.
 * Message ids equal the ids of the LangChain messages in the checkpoint.
 */
export const MessageSchema = z.object({
  id: IdSchema,
  sessionId: IdSchema,
  role: MessageRoleSchema,
  content: z.string(),
  toolCalls: z.array(ToolCallSchema),
  toolCallId: z.string().nullable(),
  tokenCount: z.number().int().min(0).nullable(),
  modelUsed: z.string().nullable(),
  parentId: IdSchema.nullable(),
  metadata: StringMapSchema,
  createdAt: z.date(),
  /** The caller's rating of an assistant message; filled in by the API's message reads. */
  feedback: MessageFeedbackSchema.nullable().optional(),
});
export type Message = z.infer<typeof MessageSchema>;

export const CreateMessageInputSchema = z
  .object({
    id: IdSchema.optional(),
    sessionId: IdSchema,
    role: MessageRoleSchema,
    content: z.string().max(MESSAGE_CONTENT_MAX),
    toolCalls: z.array(ToolCallSchema).default([]),
    toolCallId: z.string().min(1).max(256).nullable().optional(),
    tokenCount: z.number().int().min(0).nullable().optional(),
    modelUsed: z.string().max(256).nullable().optional(),
    parentId: IdSchema.nullable().optional(),
    metadata: StringMapSchema.default({}),
  })
  .strict();
export type CreateMessageInput = z.input<typeof CreateMessageInputSchema>;

/**
 * A page of a session's messages: `order` `asc` is thread order (oldest first, the default of
 * the storage port and tRPC), `desc` newest first. Offsets count from the first message of the
 * chosen order, so paging is stable under both.
 */
export const MessagePageQuerySchema = PageQuerySchema.extend({
  order: z.enum(['asc', 'desc']).default('asc'),
}).strict();
export type MessagePageQuery = z.input<typeof MessagePageQuerySchema>;

export interface MessagePage {
  messages: Message[];
  total: number;
  hasMore: boolean;
}
