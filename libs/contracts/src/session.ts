import { z } from 'zod';
import { IdSchema, PageQuerySchema, StringMapSchema } from './common';

/**
 * Session lifecycle.
 * - `active`: accepts messages (every new session starts here).
 * - `suspended`: paused by an operator or a platform; keeps its history, rejects no reads.
 * - `completed`: the work it was opened for is done; kept for reads.
 * - `failed`: ended by the platform for good (e.g. unrecoverable configuration).
 * - `error`: the last run failed; the next successful run returns it to `active`.
 */
export const SessionStatusSchema = z.enum(['active', 'suspended', 'completed', 'failed', 'error']);
export type SessionStatus = z.infer<typeof SessionStatusSchema>;

export const SESSION_TITLE_MAX = 200;

/** Per-session LLM overrides; every field optional, unset means "server default". */
export const SessionConfigSchema = z
  .object({
    providerId: z.string().min(1).max(128).optional(),
    model: z.string().min(1).max(256).optional(),
    temperature: z.number().min(0).max(2).optional(),
    maxTokens: z.number().int().min(1).max(1_000_000).optional(),
  })
  .strict();
export type SessionConfig = z.infer<typeof SessionConfigSchema>;

export const AgentNameSchema = z
  .string()
  .min(1)
  .max(64)
  .regex(/^[a-zA-Z0-9][a-zA-Z0-9_-]*$/, 'agent names are letters, digits, - and _');

/**
 * A durable conversation. Invariants: `threadId` differs from `id` and never changes;
 * `version` starts at 1 and grows by one on every write; `scopes` are fixed at creation;
 * `messageCount` equals the number of message rows of the session.
 */
export const SessionSchema = z.object({
  id: IdSchema,
  threadId: IdSchema,
  title: z.string().max(SESSION_TITLE_MAX).nullable(),
  status: SessionStatusSchema,
  agentName: AgentNameSchema,
  config: SessionConfigSchema,
  scopes: StringMapSchema,
  metadata: StringMapSchema,
  messageCount: z.number().int().min(0),
  version: z.number().int().min(1),
  parentId: IdSchema.nullable(),
  workspacePath: z.string().nullable(),
  createdAt: z.date(),
  updatedAt: z.date(),
});
export type Session = z.infer<typeof SessionSchema>;

/** Input of SessionStore.create. Scopes come from the caller's context, never from the body. */
export const CreateSessionInputSchema = z
  .object({
    id: IdSchema.optional(),
    title: z.string().max(SESSION_TITLE_MAX).nullable().optional(),
    agentName: AgentNameSchema.default('default'),
    config: SessionConfigSchema.default({}),
    metadata: StringMapSchema.default({}),
    parentId: IdSchema.nullable().optional(),
    workspacePath: z.string().max(4096).nullable().optional(),
  })
  .strict();
export type CreateSessionInput = z.input<typeof CreateSessionInputSchema>;

/**
 * Input of SessionStore.update. `metadata` and `config` replace the stored value whole.
 * `expectedVersion`, when given, makes the write conditional on the stored version.
 */
export const UpdateSessionInputSchema = z
  .object({
    title: z.string().max(SESSION_TITLE_MAX).nullable().optional(),
    status: SessionStatusSchema.optional(),
    agentName: AgentNameSchema.optional(),
    config: SessionConfigSchema.optional(),
    metadata: StringMapSchema.optional(),
    expectedVersion: z.number().int().min(1).optional(),
  })
  .strict();
export type UpdateSessionInput = z.input<typeof UpdateSessionInputSchema>;

/** What a session list can be ordered by; ties are broken by creation time, then id. */
export const SESSION_SORT_FIELDS = ['updated_at', 'created_at', 'title', 'message_count'] as const;
export const SessionSortSchema = z.enum(SESSION_SORT_FIELDS);
export type SessionSort = z.infer<typeof SessionSortSchema>;

/**
 * A page of sessions: every given filter must match (`titleContains` case-insensitively — for
 * ASCII letters on every backend), ordered by `sort` (default `updated_at`, newest activity
 * first) in `order` (default `desc`; untitled sessions sort as an empty title).
 */
export const ListSessionsQuerySchema = PageQuerySchema.extend({
  status: SessionStatusSchema.optional(),
  metadata: StringMapSchema.optional(),
  agentName: AgentNameSchema.optional(),
  titleContains: z.string().min(1).max(SESSION_TITLE_MAX).optional(),
  sort: SessionSortSchema.default('updated_at'),
  order: z.enum(['asc', 'desc']).default('desc'),
}).strict();
export type ListSessionsQuery = z.input<typeof ListSessionsQuerySchema>;

export interface SessionPage {
  sessions: Session[];
  total: number;
}
