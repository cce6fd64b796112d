import { z } from 'zod';
import { IdSchema, PageQuerySchema, StringMapSchema } from '../common';

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

/**
 * The status a read reports: the stored one, or `abandoned` for an `active` session with no
 * activity for the abandon threshold. `abandoned` is computed at read time and never stored
 * (see {@link readStatusOf}); writing it is a validation error.
 */
export const SessionReadStatusSchema = z.enum([...SessionStatusSchema.options, 'abandoned']);
export type SessionReadStatus = z.infer<typeof SessionReadStatusSchema>;

/**
 * The read-time status rule (Cognee's): an `active` session whose `lastActivityAt` is at least
 * `abandonAfterSeconds` before `now` reads as `abandoned`; every other status reads as stored.
 * A threshold of 0 disables the rule. Backends apply the same rule in SQL for the list filter
 * (`status = 'active' AND last_activity_at <= now - threshold`), and usage statistics can reuse
 * {@link abandonedCutoff} to count abandoned sessions the same way.
 */
export function readStatusOf(
  session: { status: SessionStatus | SessionReadStatus; lastActivityAt: Date },
  now: Date,
  abandonAfterSeconds: number,
): SessionReadStatus {
  if (session.status !== 'active') return session.status;
  const cutoff = abandonedCutoff(now, abandonAfterSeconds);
  return cutoff !== null && session.lastActivityAt.getTime() <= cutoff.getTime()
    ? 'abandoned'
    : 'active';
}

/** Activity at or before this instant makes an `active` session abandoned; null: rule disabled. */
export function abandonedCutoff(now: Date, abandonAfterSeconds: number): Date | null {
  return abandonAfterSeconds > 0 ? new Date(now.getTime() - abandonAfterSeconds * 1000) : null;
}

/** Largest `systemPrompt` / `task` accepted (characters). */
export const SESSION_PROMPT_MAX = 100_000;

/**
 * Checkpoint retention of a thread: `all` (default), `keep_latest`, `keep_last:<n>` (n ≥ 1), or
 * `max_age:<duration>` (`30s`, `15m`, `12h`, `7d`). Pruning never removes the thread's head.
 */
export const CheckpointRetentionSchema = z
  .string()
  .regex(
    /^(all|keep_latest|keep_last:[1-9][0-9]{0,8}|max_age:[1-9][0-9]{0,8}[smhd])$/,
    'must be all, keep_latest, keep_last:<n> or max_age:<n><s|m|h|d>',
  );

export const SESSION_TITLE_MAX = 200;

/**
 * The session metadata key that marks a LangGraph API stateless run's thread: the server deletes
 * such a session once its runs ended. Only the server writes it; a caller of the session API
 * that sends it is refused (422 naming it), so no caller can have its session swept.
 */
export const STATELESS_RUN_METADATA_KEY = 'langgraph.stateless';

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
  /** The stored status, or `abandoned` computed at read time (see {@link readStatusOf}). */
  status: SessionReadStatusSchema,
  agentName: AgentNameSchema,
  config: SessionConfigSchema,
  scopes: StringMapSchema,
  metadata: StringMapSchema,
  messageCount: z.number().int().min(0),
  version: z.number().int().min(1),
  parentId: IdSchema.nullable(),
  workspacePath: z.string().nullable(),
  /** This session's system prompt, used instead of its agent's; null: the agent's. */
  systemPrompt: z.string().nullable(),
  /** The task the session works on, shown to the agent in its system context; null: none. */
  task: z.string().nullable(),
  /** When the session reached a terminal status (`completed`, `failed`); null otherwise. */
  endedAt: z.date().nullable(),
  /** Last write to the session or to its messages (drives `abandoned` and the idle TTL). */
  lastActivityAt: z.date(),
  /** Per-session expiry, winning over the server's idle TTL; null: the TTL applies. */
  expiresAt: z.date().nullable(),
  /** Per-session checkpoint retention (see CheckpointRetentionSchema); null: the server's. */
  checkpointRetention: CheckpointRetentionSchema.nullable(),
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
    systemPrompt: z.string().max(SESSION_PROMPT_MAX).nullable().optional(),
    task: z.string().max(SESSION_PROMPT_MAX).nullable().optional(),
    expiresAt: z.date().nullable().optional(),
    checkpointRetention: CheckpointRetentionSchema.nullable().optional(),
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
    systemPrompt: z.string().max(SESSION_PROMPT_MAX).nullable().optional(),
    task: z.string().max(SESSION_PROMPT_MAX).nullable().optional(),
    endedAt: z.date().nullable().optional(),
    expiresAt: z.date().nullable().optional(),
    checkpointRetention: CheckpointRetentionSchema.nullable().optional(),
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
  /** `abandoned` selects active sessions idle past the threshold (filtered in the database). */
  status: SessionReadStatusSchema.optional(),
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
