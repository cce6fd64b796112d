import { z } from 'zod';
import { IdSchema, PageQuerySchema, StringMapSchema } from '../common';
import { SessionReadStatusSchema } from './session';

/**
 * The points of the session execute pipeline (load → hooks → action → hooks → save → hooks)
 * that emit an event. `*_failed` carry the error code.
 */
export const SESSION_EVENT_TYPES = [
  'session.loaded',
  'session.action_executed',
  'session.saved',
  'session.load_failed',
  'session.save_failed',
] as const;
export const SessionEventTypeSchema = z.enum(SESSION_EVENT_TYPES);
export type SessionEventType = z.infer<typeof SessionEventTypeSchema>;

/** The session actions of the pipeline (the existing PATCH is `update`). */
export const SESSION_ACTIONS = [
  'create',
  'update',
  'suspend',
  'resume',
  'complete',
  'fail',
  'clear',
  'fork',
  'rewind',
  'set_metadata',
  'delete_metadata',
] as const;
export const SessionActionSchema = z.enum(SESSION_ACTIONS);
export type SessionAction = z.infer<typeof SessionActionSchema>;

/**
 * One entry of a session's activity log: a session event as persisted (ids increase in the
 * order entries were written, across sessions). Entries of a deleted session go with it.
 */
export const SessionActivitySchema = z.object({
  id: z.number().int().min(1),
  sessionId: IdSchema,
  type: SessionEventTypeSchema,
  action: SessionActionSchema.nullable(),
  versionBefore: z.number().int().nullable(),
  versionAfter: z.number().int().nullable(),
  statusBefore: SessionReadStatusSchema.nullable(),
  statusAfter: SessionReadStatusSchema.nullable(),
  /** The error code of a `*_failed` event. */
  errorCode: z.string().nullable(),
  /** Action details (e.g. `reason` of `fail`, `checkpoint_id` of `rewind`, `forked_to`). */
  detail: StringMapSchema,
  createdAt: z.date(),
});
export type SessionActivity = z.infer<typeof SessionActivitySchema>;

/** What a writer appends (the store assigns `id` and `createdAt`). */
export type NewSessionActivity = Omit<SessionActivity, 'id' | 'createdAt'>;

export const SessionActivityQuerySchema = PageQuerySchema.strict();
export type SessionActivityQuery = z.input<typeof SessionActivityQuerySchema>;

/** Newest first. */
export interface SessionActivityPage {
  entries: SessionActivity[];
  total: number;
  hasMore: boolean;
}

/** One checkpoint of a session's thread as `sessions.history` lists it (newest first). */
export interface ThreadCheckpoint {
  checkpointId: string;
  parentCheckpointId: string | null;
  step: number;
  createdAt: Date;
  messageCount: number;
  lastMessagePreview: string | null;
}

export interface ThreadHistoryPage {
  checkpoints: ThreadCheckpoint[];
  hasMore: boolean;
}
