import {
  ContextWindowViewSchema,
  IdSchema,
  MessageRoleSchema,
  PAGE_LIMIT_DEFAULT,
  PAGE_LIMIT_MAX,
  SendMessageFieldsSchema,
  StringMapSchema,
} from '@cognition/contracts';
import { z } from 'zod';
import { queryInt, Timestamp } from './common';
import { FeedbackBody } from './usage';

/* Messages: the thread, one message, the context window, and sending a message. */

const ToolCallBody = z
  .object({ id: z.string(), name: z.string(), args: z.record(z.string(), z.unknown()) })
  .meta({ id: 'ToolCall' });

export const MessageBody = z
  .object({
    id: IdSchema,
    session_id: IdSchema,
    role: MessageRoleSchema,
    content: z.string(),
    tool_calls: z.array(ToolCallBody),
    tool_call_id: z.string().nullable(),
    token_count: z.number().int().min(0).nullable(),
    model_used: z.string().nullable(),
    parent_id: z.string().nullable(),
    metadata: StringMapSchema,
    created_at: Timestamp,
    feedback: FeedbackBody.nullable()
      .optional()
      .meta({ description: 'The rating of an assistant message (on reads), null when unrated' }),
  })
  .meta({ id: 'Message' });

export const MessageListBody = z
  .object({
    messages: z.array(MessageBody),
    total: z.number().int().min(0),
    has_more: z.boolean(),
  })
  .meta({ id: 'MessageList' });

export const MessageIdParams = z.object({
  id: IdSchema.meta({ description: 'Session id' }),
  mid: IdSchema.meta({ description: 'Message id' }),
});

export const ListMessagesQuery = z
  .object({
    limit: queryInt(1, PAGE_LIMIT_MAX, `Page size (default ${PAGE_LIMIT_DEFAULT})`).optional(),
    offset: queryInt(0, 1_000_000_000, 'Messages to skip (default 0)').optional(),
    order: z.enum(['asc', 'desc']).optional().meta({
      description: 'desc (default, as the original API): newest first; asc: thread order',
    }),
  })
  .strict();

/** The context-window view: the contract's schema (already snake_case), named for OpenAPI. */
export const ContextWindowBody = ContextWindowViewSchema.meta({ id: 'ContextWindow' });

/** `someField` as `some_field`. */
type SnakeCase<S extends string> = S extends `${infer Head}${infer Tail}`
  ? `${Head extends Lowercase<Head> ? Head : `_${Lowercase<Head>}`}${SnakeCase<Tail>}`
  : S;

const send = SendMessageFieldsSchema.shape;
/** The send fields a caller sets (the session is the path's, the scope the caller's). */
type SendFields = typeof send;

/**
 * Body of `POST /sessions/{id}/messages`: the contract's send fields (`SendMessageFieldsSchema`,
 * which the runtime and tRPC check too), field for field in snake_case, so all accept exactly
 * the same values. A field added to the contract fails to compile here until REST names it.
 */
export const SendMessageBody = z
  .object({
    content: send.content,
    parent_id: send.parentId.meta({
      description: 'A message of this session that this one answers',
    }),
    callback_url: send.callbackUrl.meta({
      description: 'Receives a POST with the completion payload when the run ends',
    }),
    idempotency_key: send.idempotencyKey.meta({
      description: 'A retried send with the same key streams the first run instead of a new one',
    }),
    metadata: send.metadata,
    multitask_strategy: send.multitaskStrategy.meta({
      description:
        'When the session has an active run: reject (409, the default), enqueue (run after it), ' +
        'interrupt (end it `interrupted`, keep its partial answer, then run) or rollback (remove ' +
        'it with its message and checkpoints, then run). The new run streams `queued` first.',
    }),
  } satisfies { [K in keyof SendFields as SnakeCase<K & string>]: z.ZodType })
  .strict()
  .meta({
    id: 'SendMessageRequest',
    example: { content: 'List the files in this directory.' },
  });

export type MessageBodyT = z.infer<typeof MessageBody>;
