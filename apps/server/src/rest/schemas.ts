import {
  AgentNameSchema,
  ContextWindowViewSchema,
  ErrorCodeSchema,
  EventIdSchema,
  IdSchema,
  MESSAGE_CONTENT_MAX,
  MessageRoleSchema,
  MultitaskStrategySchema,
  PAGE_LIMIT_DEFAULT,
  PAGE_LIMIT_MAX,
  PendingActionSchema,
  ResumeRunBodySchema,
  RunStatusSchema,
  SESSION_TITLE_MAX,
  SessionConfigSchema,
  CheckpointRetentionSchema,
  SESSION_PROMPT_MAX,
  SessionReadStatusSchema,
  SessionSortSchema,
  SessionStatusSchema,
  StringMapSchema,
} from '@cognition/contracts';
import { z } from 'zod';
import { FeedbackBody, SessionUsageBody } from './usage-bodies';

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

export const TitleSchema = z.string().max(SESSION_TITLE_MAX).nullable();
const PromptSchema = z.string().max(SESSION_PROMPT_MAX).nullable();
/** An ISO 8601 timestamp with a time zone, as text (`2026-11-25T10:00:00Z`). */
const TimestampInput = z.iso
  .datetime({ offset: true, error: 'expected an ISO 8601 date-time with a time zone' })
  .transform((text) => new Date(text));
const lifecycleFields = {
  system_prompt: PromptSchema.optional().meta({
    description: "This session's system prompt, used instead of the agent's (null: the agent's)",
  }),
  task: PromptSchema.optional().meta({
    description: 'The task the session works on, shown to the agent in its system context',
  }),
  expires_at: TimestampInput.nullable().optional().meta({
    description:
      'When the session expires (wins over COGNITION_SESSION_TTL_SECONDS); null: the TTL applies',
  }),
  checkpoint_retention: CheckpointRetentionSchema.nullable().optional().meta({
    description:
      "This session's checkpoint retention (all | keep_latest | keep_last:<n> | max_age:<n><s|m|h|d>); null: the server's",
  }),
};

export const CreateSessionBody = z
  .object({
    title: TitleSchema.optional(),
    agent_name: AgentNameSchema.optional(),
    metadata: StringMapSchema.optional(),
    config: SessionConfigBody.optional(),
    ...lifecycleFields,
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
    ...lifecycleFields,
    expected_version: z.number().int().min(1).optional(),
  })
  .strict()
  .meta({
    id: 'UpdateSessionRequest',
    description:
      'metadata and config replace the stored value whole; expected_version makes the write conditional.',
    example: { title: 'Renamed', expected_version: 1 },
  });

export const Timestamp = z.string().meta({ format: 'date-time' });

export const SessionBody = z
  .object({
    id: IdSchema,
    thread_id: IdSchema,
    title: z.string().nullable(),
    status: SessionReadStatusSchema.meta({
      description:
        '`abandoned` is computed at read time: an active session idle for COGNITION_SESSION_ABANDON_AFTER_SECONDS',
    }),
    agent_name: z.string(),
    config: SessionConfigBody,
    scopes: StringMapSchema,
    metadata: StringMapSchema,
    message_count: z.number().int().min(0),
    version: z.number().int().min(1),
    parent_id: z.string().nullable(),
    workspace_path: z.string().nullable(),
    system_prompt: z.string().nullable(),
    task: z.string().nullable(),
    ended_at: Timestamp.nullable(),
    last_activity_at: Timestamp,
    expires_at: Timestamp.nullable(),
    checkpoint_retention: z.string().nullable(),
    created_at: Timestamp,
    updated_at: Timestamp,
    usage: SessionUsageBody,
    pending_action: z
      .object({ run_id: IdSchema, tool_calls: PendingActionSchema.shape.tool_calls })
      .nullable()
      .optional()
      .meta({
        description:
          'GET /sessions/{id} only: while a run of the session waits for a decision (human in ' +
          'the loop), the run and the tool calls it waits on; null otherwise',
      }),
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

export const ErrorBodySchema = z
  .object({
    detail: z.string(),
    code: ErrorCodeSchema,
    errors: z.array(z.object({ path: z.string(), message: z.string() })).optional(),
  })
  .meta({ id: 'Error', description: 'Body of every non-2xx response.' });

export const BreakerSnapshotBody = z
  .object({
    state: z.enum(['closed', 'open', 'half_open']),
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
    runs: z
      .object({
        executing: z.number().int().min(0),
        queued: z.number().int().min(0),
        limit: z.number().int().min(1),
      })
      .nullable()
      .meta({
        description:
          'Runs of this process: executing, waiting for a slot (`queued`), and the limit (COGNITION_MAX_CONCURRENT_RUNS); null for callers that did not identify themselves.',
      }),
    storage: StorageHealthBody,
    circuit_breakers: z.record(z.string(), BreakerSnapshotBody).meta({
      description: 'Breakers keyed by name (e.g. `llm:openai`), as the original API reports them',
    }),
    node: z
      .object({
        id: z.string().nullable().meta({ description: 'COGNITION_NODE_ID; null on one node' }),
        owned_runs: z.array(IdSchema).meta({ description: 'Runs this node executes' }),
        redis: z
          .object({
            status: z.string(),
            ok: z.boolean(),
            latency_ms: z.number().nullable(),
            error: z.string().optional(),
          })
          .nullable()
          .meta({ description: 'null on one node (no COGNITION_REDIS_URL)' }),
      })
      .nullable()
      .meta({ description: 'null for callers that did not identify themselves' }),
  })
  .meta({ id: 'Health' });

export const ReadyBody = z.object({ ready: z.boolean() }).meta({ id: 'Ready' });

/** A non-negative integer sent as query text (`?limit=20`). */
export function queryInt(min: number, max: number, description: string) {
  return z
    .string()
    .regex(/^\d{1,9}$/, `expected an integer between ${min} and ${max}`)
    .transform(Number)
    .pipe(z.number().int().min(min).max(max))
    .meta({ description });
}

/** The context-window view: the contract's schema (already snake_case), named for OpenAPI. */
export const ContextWindowBody = ContextWindowViewSchema.meta({ id: 'ContextWindow' });

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
    status: SessionReadStatusSchema.optional().meta({
      description:
        '`abandoned`: active sessions idle past the threshold (`active` then excludes them)',
    }),
    agent_name: AgentNameSchema.optional().meta({ description: 'Only sessions of this agent' }),
    title_contains: z
      .string()
      .min(1)
      .max(SESSION_TITLE_MAX)
      .optional()
      .meta({ description: 'Text in the title, case-insensitive (ASCII letters)' }),
    sort: SessionSortSchema.optional().meta({ description: 'Order by (default updated_at)' }),
    order: z.enum(['asc', 'desc']).optional().meta({ description: 'Default desc' }),
    limit: queryInt(1, PAGE_LIMIT_MAX, `Page size (default ${PAGE_LIMIT_DEFAULT})`).optional(),
    offset: queryInt(0, 1_000_000_000, 'Sessions to skip (default 0)').optional(),
  })
  .strict();

export const ListMessagesQuery = z
  .object({
    limit: queryInt(1, PAGE_LIMIT_MAX, `Page size (default ${PAGE_LIMIT_DEFAULT})`).optional(),
    offset: queryInt(0, 1_000_000_000, 'Messages to skip (default 0)').optional(),
    order: z.enum(['asc', 'desc']).optional().meta({
      description: 'desc (default, as the original API): newest first; asc: thread order',
    }),
  })
  .strict();

export const SendMessageBody = z
  .object({
    content: z.string().min(1).max(MESSAGE_CONTENT_MAX),
    parent_id: IdSchema.nullable()
      .optional()
      .meta({ description: 'A message of this session that this one answers' }),
    callback_url: z
      .url({ protocol: /^https?$/, error: 'must be an http or https URL' })
      .max(2048)
      .nullable()
      .optional()
      .meta({ description: 'Receives a POST with the completion payload when the run ends' }),
    idempotency_key: z.string().min(1).max(256).nullable().optional().meta({
      description: 'A retried send with the same key streams the first run instead of a new one',
    }),
    metadata: StringMapSchema.optional(),
    multitask_strategy: MultitaskStrategySchema.optional().meta({
      description:
        'When the session has an active run: reject (409, the default), enqueue (run after it), ' +
        'interrupt (end it `interrupted`, keep its partial answer, then run) or rollback (remove ' +
        'it with its message and checkpoints, then run). The new run streams `queued` first.',
    }),
  })
  .strict()
  .meta({
    id: 'SendMessageRequest',
    example: { content: 'List the files in this directory.' },
  });

export const UsageBody = z
  .object({
    input_tokens: z.number().int().min(0),
    output_tokens: z.number().int().min(0),
    cost_usd: z.number().min(0).nullable().meta({ description: 'null when the price is unknown' }),
    model: z.string().nullable(),
    provider: z.string().nullable(),
    estimated: z.boolean().meta({ description: 'true when the provider reported no usage' }),
  })
  .meta({ id: 'Usage' });

export const RunBody = z
  .object({
    id: IdSchema,
    session_id: IdSchema,
    status: RunStatusSchema,
    input_message_id: IdSchema.nullable().meta({
      description: 'null while the run is pending (its message enters the history when it starts)',
    }),
    idempotency_key: z.string().nullable(),
    multitask_strategy: MultitaskStrategySchema.nullable().meta({
      description: 'How it was sent while another run was active (null: the session was idle)',
    }),
    supersedes_run_id: IdSchema.nullable().meta({
      description: 'The run that was active when this one was sent',
    }),
    pending_action: PendingActionSchema.nullable().meta({
      description:
        'While the run is `requires_action`: the tool calls it waits for a decision on, each ' +
        'with the decisions allowed (resume with POST /sessions/{id}/runs/{run_id}/resume)',
    }),
    usage: UsageBody.nullable(),
    error: z.object({ code: ErrorCodeSchema, message: z.string() }).nullable(),
    created_at: Timestamp,
    started_at: Timestamp.nullable(),
    finished_at: Timestamp.nullable(),
    updated_at: Timestamp,
  })
  .meta({ id: 'Run' });

export const CallbackAttemptBody = z
  .object({
    delivery_id: z.string(),
    url: z.string(),
    attempt: z.number().int().min(1),
    started_at: Timestamp,
    duration_ms: z.number().int().min(0),
    status: z.number().int().nullable().meta({ description: 'null when no response arrived' }),
    ok: z.boolean(),
    error: z.string().nullable(),
  })
  .meta({ id: 'CallbackAttempt' });

export const RunDetailBody = RunBody.extend({
  callback_attempts: z.array(CallbackAttemptBody).meta({
    description: 'Completion-callback delivery attempts recorded on the run, oldest first',
  }),
}).meta({ id: 'RunDetail' });

export const RunListBody = z.object({ runs: z.array(RunBody) }).meta({ id: 'RunList' });

export const RunListQuery = z
  .object({
    status: RunStatusSchema.optional().meta({
      description: 'Only runs in this status (`requires_action`: those waiting for a decision)',
    }),
  })
  .strict();

/** Body of POST /sessions/{id}/runs/{run_id}/resume. */
export const ResumeRunBody = ResumeRunBodySchema.meta({ id: 'ResumeRun' });

export const AbortBody = z
  .object({
    aborted: z.boolean().meta({ description: 'true when a running run was cancelled' }),
    run: RunBody.nullable().meta({ description: 'The run that was active; null when none was' }),
  })
  .meta({ id: 'AbortResult' });

/** The documented shape of a `text/event-stream` response (one string of SSE frames). */
export const EventStreamBody = z.string().meta({
  id: 'EventStream',
  description:
    'Server-Sent Events: a `retry:` line, then one `id:`/`event:`/`data:` block per agent event ' +
    '(data = the event payload as snake_case JSON), `: ping` comments as heartbeats; ends after ' +
    "the run's terminal `done` or `error` event. See docs/streaming.md.",
});

export const RunIdParams = z.object({
  id: IdSchema.meta({ description: 'Session id' }),
  run_id: IdSchema.meta({ description: 'Run id' }),
});

/** Resume cursor for the SSE routes; the `Last-Event-ID` header carries the same value. */
export const StreamQuery = z
  .object({
    last_event_id: EventIdSchema.optional().meta({
      description: 'Resume after this event id (alternative to the Last-Event-ID header)',
    }),
  })
  .strict();

export type SessionConfigBodyT = z.infer<typeof SessionConfigBody>;
export type SessionBodyT = z.infer<typeof SessionBody>;
export type MessageBodyT = z.infer<typeof MessageBody>;
export type HealthBodyT = z.infer<typeof HealthBody>;
export type RunBodyT = z.infer<typeof RunBody>;
export type RunDetailBodyT = z.infer<typeof RunDetailBody>;
