import {
  STATELESS_RUN_METADATA_KEY,
  CreateSessionInputSchema,
  IdSchema,
  ListSessionsQuerySchema,
  PageQuerySchema,
  StringMapSchema,
  UpdateSessionInputSchema,
} from '@cognition/contracts';
import { z } from 'zod';

const RESERVED_MESSAGE = 'reserved for the LangGraph API (its stateless runs); not writable';

/** The server's own metadata key is never taken from a caller (422 naming it). */
function refuseReservedKey(
  input: { metadata?: Record<string, string> | undefined },
  ctx: z.RefinementCtx,
): void {
  if (input.metadata && Object.hasOwn(input.metadata, STATELESS_RUN_METADATA_KEY)) {
    ctx.addIssue({
      code: 'custom',
      path: ['metadata', STATELESS_RUN_METADATA_KEY],
      message: RESERVED_MESSAGE,
    });
  }
}

/** Inputs are strict: an unknown field is a 422, never silently dropped. */
export const CreateSessionApiInputSchema = CreateSessionInputSchema.pick({
  title: true,
  agentName: true,
  metadata: true,
  config: true,
  systemPrompt: true,
  task: true,
  expiresAt: true,
  checkpointRetention: true,
})
  .strict()
  .superRefine(refuseReservedKey);
export type CreateSessionApiInput = z.output<typeof CreateSessionApiInputSchema>;

export const SessionIdInputSchema = z.object({ id: IdSchema }).strict();
export type SessionIdInput = z.output<typeof SessionIdInputSchema>;

/** Optional as a whole: `sessions.list()` is the first page with default limit. */
export const ListSessionsApiInputSchema = ListSessionsQuerySchema.prefault({});
export type ListSessionsApiInput = z.output<typeof ListSessionsApiInputSchema>;

/** PATCH: `endedAt` is the pipeline's (set by a terminal status), never the caller's. */
export const UpdateSessionApiInputSchema = UpdateSessionInputSchema.omit({ endedAt: true })
  .extend({ id: IdSchema })
  .strict()
  .superRefine(refuseReservedKey);
export type UpdateSessionApiInput = z.output<typeof UpdateSessionApiInputSchema>;

const ExpectedVersion = z.number().int().min(1).optional();

/** suspend, resume, complete, clear. */
export const SessionActionApiInputSchema = z
  .object({ id: IdSchema, expectedVersion: ExpectedVersion })
  .strict();
export type SessionActionApiInput = z.output<typeof SessionActionApiInputSchema>;

export const FailSessionApiInputSchema = SessionActionApiInputSchema.extend({
  reason: z.string().min(1).max(2000).optional(),
}).strict();
export type FailSessionApiInput = z.output<typeof FailSessionApiInputSchema>;

function onePoint(value: { checkpointId?: string | undefined; messageId?: string | undefined }) {
  return !(value.checkpointId !== undefined && value.messageId !== undefined);
}

export const ForkSessionApiInputSchema = z
  .object({
    id: IdSchema,
    title: CreateSessionInputSchema.shape.title,
    checkpointId: IdSchema.optional(),
    messageId: IdSchema.optional(),
  })
  .strict()
  .refine(onePoint, {
    path: ['checkpointId'],
    message: 'give checkpointId or messageId, not both',
  });
export type ForkSessionApiInput = z.output<typeof ForkSessionApiInputSchema>;

export const RewindSessionApiInputSchema = z
  .object({
    id: IdSchema,
    checkpointId: IdSchema.optional(),
    messageId: IdSchema.optional(),
    expectedVersion: ExpectedVersion,
  })
  .strict()
  .refine((v) => (v.checkpointId === undefined) !== (v.messageId === undefined), {
    path: ['checkpointId'],
    message: 'give exactly one of checkpointId and messageId',
  });
export type RewindSessionApiInput = z.output<typeof RewindSessionApiInputSchema>;

const MetadataKey = StringMapSchema.keyType.refine((key) => key !== STATELESS_RUN_METADATA_KEY, {
  message: RESERVED_MESSAGE,
});

export const SetMetadataApiInputSchema = z
  .object({
    id: IdSchema,
    key: MetadataKey,
    value: StringMapSchema.valueType,
    expectedVersion: ExpectedVersion,
  })
  .strict();
export type SetMetadataApiInput = z.output<typeof SetMetadataApiInputSchema>;

export const DeleteMetadataApiInputSchema = z
  .object({ id: IdSchema, key: MetadataKey, expectedVersion: ExpectedVersion })
  .strict();
export type DeleteMetadataApiInput = z.output<typeof DeleteMetadataApiInputSchema>;

/** history and activity: newest first. */
export const SessionPageApiInputSchema = PageQuerySchema.extend({ id: IdSchema }).strict();
export type SessionPageApiInput = z.output<typeof SessionPageApiInputSchema>;

/**
 * `sessions.watch`: the activity of one session, or of every session of the caller's scope.
 * `lastEventId` (set by the client on reconnect) replays the stored entries after it.
 */
/** The largest activity id (ids are a 32-bit serial). */
const MAX_ACTIVITY_ID = 2_147_483_647;

export const WatchSessionsApiInputSchema = z
  .object({
    sessionId: IdSchema.optional(),
    // Activity ids are 32-bit (a PostgreSQL integer): a larger one names no entry and would
    // fail in the database instead of here.
    lastEventId: z
      .string()
      .regex(/^\d+$/, 'must be an activity id')
      .refine(
        (id) => Number(id) <= MAX_ACTIVITY_ID,
        `must be an activity id (at most ${MAX_ACTIVITY_ID})`,
      )
      .nullish(),
  })
  .strict()
  .prefault({});
export type WatchSessionsApiInput = z.output<typeof WatchSessionsApiInputSchema>;
