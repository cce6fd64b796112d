import {
  AgentNameSchema,
  CheckpointRetentionSchema,
  IdSchema,
  PAGE_LIMIT_DEFAULT,
  PAGE_LIMIT_MAX,
  PendingActionSchema,
  SESSION_PROMPT_MAX,
  SESSION_TITLE_MAX,
  SessionConfigSchema,
  SessionReadStatusSchema,
  SessionSortSchema,
  SessionStatusSchema,
  StringMapSchema,
} from '@cognition/contracts';
import { z } from 'zod';
import { queryInt, Timestamp, TimestampInput } from './common';
import { SessionUsageBody } from './usage';

/* Sessions: create, update, read and list. */

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

export type SessionConfigBodyT = z.infer<typeof SessionConfigBody>;

export type SessionBodyT = z.infer<typeof SessionBody>;
