import {
  AgentNameSchema,
  ErrorCodeSchema,
  IdSchema,
  MessageRoleSchema,
  PAGE_LIMIT_DEFAULT,
  PAGE_LIMIT_MAX,
  SESSION_TITLE_MAX,
  SessionConfigSchema,
  SessionStatusSchema,
  StringMapSchema,
} from '@cognition/contracts';
import { z } from 'zod';

/*
 * The REST surface's wire shapes (snake_case, the original Cognition's field names), defined once:
 * the adapters validate requests with them and the OpenAPI document is generated from them.
 * Field constraints are taken from the contracts so REST and tRPC accept exactly the same values.
 * User maps (metadata, scopes) pass through untouched: their keys are data, not field names.
 */

const configShape = SessionConfigSchema.shape;

export const SessionConfigBody = z
  .object({
    provider_id: configShape.providerId,
    model: configShape.model,
    temperature: configShape.temperature,
    max_tokens: configShape.maxTokens,
  })
  .strict()
  .meta({
    id: 'SessionConfig',
    description: 'Per-session LLM overrides; unset means server default.',
  });

const TitleSchema = z.string().max(SESSION_TITLE_MAX).nullable();

export const CreateSessionBody = z
  .object({
    title: TitleSchema.optional(),
    agent_name: AgentNameSchema.optional(),
    metadata: StringMapSchema.optional(),
    config: SessionConfigBody.optional(),
  })
  .strict()
  .meta({
    id: 'CreateSessionRequest',
    example: { title: 'PR review session', metadata: { repository: 'myorg/myrepo' } },
  });

export const UpdateSessionBody = z
  .object({
    title: TitleSchema.optional(),
    status: SessionStatusSchema.optional(),
    agent_name: AgentNameSchema.optional(),
    metadata: StringMapSchema.optional(),
    config: SessionConfigBody.optional(),
    expected_version: z.number().int().min(1).optional(),
  })
  .strict()
  .meta({
    id: 'UpdateSessionRequest',
    description:
      'metadata and config replace the stored value whole; expected_version makes the write conditional.',
    example: { title: 'Renamed', expected_version: 1 },
  });

const Timestamp = z.string().meta({ format: 'date-time' });

export const SessionBody = z
  .object({
    id: IdSchema,
    thread_id: IdSchema,
    title: z.string().nullable(),
    status: SessionStatusSchema,
    agent_name: z.string(),
    config: SessionConfigBody,
    scopes: StringMapSchema,
    metadata: StringMapSchema,
    message_count: z.number().int().min(0),
    version: z.number().int().min(1),
    parent_id: z.string().nullable(),
    workspace_path: z.string().nullable(),
    created_at: Timestamp,
    updated_at: Timestamp,
  })
  .meta({ id: 'Session' });

export const SessionListBody = z
  .object({ sessions: z.array(SessionBody), total: z.number().int().min(0) })
  .meta({ id: 'SessionList' });

export const ToolCallBody = z
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
  })
  .meta({ id: 'Message' });

export const MessageListBody = z
  .object({
    messages: z.array(MessageBody),
    total: z.number().int().min(0),
    has_more: z.boolean(),
  })
  .meta({ id: 'MessageList' });

export const ErrorBodySchema = z
  .object({
    detail: z.string(),
    code: ErrorCodeSchema,
    errors: z.array(z.object({ path: z.string(), message: z.string() })).optional(),
  })
  .meta({ id: 'Error', description: 'Body of every non-2xx response.' });

export const BreakerSnapshotBody = z
  .object({
    name: z.string(),
    state: z.enum(['CLOSED', 'OPEN', 'HALF_OPEN']),
    total_calls: z.number().int().optional(),
    failed_calls: z.number().int().optional(),
    rejected_calls: z.number().int().optional(),
    consecutive_failures: z.number().int().optional(),
    opened_at: Timestamp.nullable().optional(),
  })
  .meta({ id: 'CircuitBreakerSnapshot' });

export const StorageHealthBody = z
  .object({
    backend: z.enum(['memory', 'sqlite', 'postgres']),
    ok: z.boolean(),
    latency_ms: z.number(),
    pool: z
      .object({ size: z.number().int(), idle: z.number().int(), waiting: z.number().int() })
      .optional(),
    error: z.string().optional(),
  })
  .meta({ id: 'StorageHealth' });

export const HealthBody = z
  .object({
    status: z.enum(['healthy', 'degraded']),
    version: z.string(),
    active_sessions: z.number().int().min(0).nullable().meta({
      description:
        "Active sessions within the caller's scope; null when scoping is enabled and the caller sent no scope.",
    }),
    storage: StorageHealthBody,
    circuit_breakers: z.array(BreakerSnapshotBody),
  })
  .meta({ id: 'Health' });

export const ReadyBody = z.object({ ready: z.boolean() }).meta({ id: 'Ready' });

/** A non-negative integer sent as query text (`?limit=20`). */
function queryInt(min: number, max: number, description: string) {
  return z
    .string()
    .regex(/^\d{1,9}$/, `expected an integer between ${min} and ${max}`)
    .transform(Number)
    .pipe(z.number().int().min(min).max(max))
    .meta({ description });
}

export const SessionIdParams = z.object({ id: IdSchema.meta({ description: 'Session id' }) });
export const MessageIdParams = z.object({
  id: IdSchema.meta({ description: 'Session id' }),
  mid: IdSchema.meta({ description: 'Message id' }),
});

export const METADATA_QUERY_PREFIX = 'metadata.';

/**
 * Query of `GET /sessions`, apart from the `metadata.<key>=<value>` predicates (dynamic names,
 * collected separately and documented on the route).
 */
export const ListSessionsQuery = z
  .object({
    status: SessionStatusSchema.optional(),
    limit: queryInt(1, PAGE_LIMIT_MAX, `Page size (default ${PAGE_LIMIT_DEFAULT})`).optional(),
    offset: queryInt(0, 1_000_000_000, 'Sessions to skip (default 0)').optional(),
  })
  .strict();

export const ListMessagesQuery = z
  .object({
    limit: queryInt(1, PAGE_LIMIT_MAX, `Page size (default ${PAGE_LIMIT_DEFAULT})`).optional(),
    offset: queryInt(0, 1_000_000_000, 'Messages to skip (default 0)').optional(),
  })
  .strict();

export type SessionConfigBodyT = z.infer<typeof SessionConfigBody>;
export type SessionBodyT = z.infer<typeof SessionBody>;
export type MessageBodyT = z.infer<typeof MessageBody>;
export type HealthBodyT = z.infer<typeof HealthBody>;
