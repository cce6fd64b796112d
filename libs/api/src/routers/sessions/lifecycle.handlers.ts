import type {
  Session,
  SessionActivity,
  SessionActivityPage,
  SessionWithUsage,
  ThreadHistoryPage,
} from '@cognition/contracts';
import type { TrackedEnvelope } from '@trpc/server';
import { tracked } from '@trpc/server';
import type { ApiContext } from '../../context';
import { withUsage } from './usage.handlers';
import { requireSession } from '../../lookups';
import type {
  DeleteMetadataApiInput,
  FailSessionApiInput,
  ForkSessionApiInput,
  RewindSessionApiInput,
  SessionActionApiInput,
  SessionPageApiInput,
  SetMetadataApiInput,
  WatchSessionsApiInput,
} from './schemas';

/*
 * The session actions: each goes through the session pipeline (load → hooks → action → hooks →
 * save with the version check → hooks) of `ctx.services.sessions`. Wrong state (resume a
 * completed session) is a 409 CONFLICT naming it; a stale `expectedVersion` a 409
 * VERSION_CONFLICT; a run in progress (clear, rewind) a 409 RUN_IN_PROGRESS.
 */

interface Call<I> {
  ctx: ApiContext;
  input: I;
}

const versioned = (input: { expectedVersion?: number | undefined }) =>
  input.expectedVersion !== undefined ? { expectedVersion: input.expectedVersion } : {};

/** status `suspended`; an active run is aborted first (its partial output is kept). */
export async function suspendSessionHandler({
  ctx,
  input,
}: Call<SessionActionApiInput>): Promise<SessionWithUsage> {
  return oneWithUsage(
    ctx,
    await ctx.services.sessions.suspend(input.id, versioned(input), ctx.caller.scope),
  );
}

/** suspended (or error) → active. */
export async function resumeSessionHandler({
  ctx,
  input,
}: Call<SessionActionApiInput>): Promise<SessionWithUsage> {
  return oneWithUsage(
    ctx,
    await ctx.services.sessions.resume(input.id, versioned(input), ctx.caller.scope),
  );
}

/** Terminal `completed` (reads work, messages → 409); `endedAt` is stamped. */
export async function completeSessionHandler({
  ctx,
  input,
}: Call<SessionActionApiInput>): Promise<SessionWithUsage> {
  return oneWithUsage(
    ctx,
    await ctx.services.sessions.complete(input.id, versioned(input), ctx.caller.scope),
  );
}

/** Terminal `failed`, with an optional reason (kept in the activity log). */
export async function failSessionHandler({
  ctx,
  input,
}: Call<FailSessionApiInput>): Promise<SessionWithUsage> {
  return oneWithUsage(
    ctx,
    await ctx.services.sessions.fail(
      input.id,
      { ...versioned(input), ...(input.reason !== undefined ? { reason: input.reason } : {}) },
      ctx.caller.scope,
    ),
  );
}

/** The next turn starts from an empty conversation; the history stays readable. */
export async function clearSessionHandler({
  ctx,
  input,
}: Call<SessionActionApiInput>): Promise<SessionWithUsage> {
  return oneWithUsage(
    ctx,
    await ctx.services.sessions.clear(input.id, versioned(input), ctx.caller.scope),
  );
}

/** A new session from the source's state at a checkpoint or message (latest by default). */
export async function forkSessionHandler({
  ctx,
  input,
}: Call<ForkSessionApiInput>): Promise<SessionWithUsage> {
  return oneWithUsage(
    ctx,
    await ctx.services.sessions.fork(
      input.id,
      {
        ...(input.title !== undefined ? { title: input.title } : {}),
        ...(input.checkpointId !== undefined ? { checkpointId: input.checkpointId } : {}),
        ...(input.messageId !== undefined ? { messageId: input.messageId } : {}),
      },
      ctx.caller.scope,
    ),
  );
}

/** The thread's head moves back to a checkpoint or message (a new checkpoint equal to it). */
export async function rewindSessionHandler({
  ctx,
  input,
}: Call<RewindSessionApiInput>): Promise<SessionWithUsage> {
  return oneWithUsage(
    ctx,
    await ctx.services.sessions.rewind(
      input.id,
      {
        ...versioned(input),
        ...(input.checkpointId !== undefined ? { checkpointId: input.checkpointId } : {}),
        ...(input.messageId !== undefined ? { messageId: input.messageId } : {}),
      },
      ctx.caller.scope,
    ),
  );
}

export async function setMetadataHandler({
  ctx,
  input,
}: Call<SetMetadataApiInput>): Promise<SessionWithUsage> {
  return oneWithUsage(
    ctx,
    await ctx.services.sessions.setMetadata(
      input.id,
      input.key,
      input.value,
      versioned(input),
      ctx.caller.scope,
    ),
  );
}

export async function deleteMetadataHandler({
  ctx,
  input,
}: Call<DeleteMetadataApiInput>): Promise<SessionWithUsage> {
  return oneWithUsage(
    ctx,
    await ctx.services.sessions.deleteMetadata(
      input.id,
      input.key,
      versioned(input),
      ctx.caller.scope,
    ),
  );
}

/** The thread's checkpoints, newest first. */
export function sessionHistoryHandler({
  ctx,
  input,
}: Call<SessionPageApiInput>): Promise<ThreadHistoryPage> {
  return ctx.services.sessions.history(
    input.id,
    { limit: input.limit, offset: input.offset },
    ctx.caller.scope,
  );
}

/** The session's activity log, newest first. */
export function sessionActivityHandler({
  ctx,
  input,
}: Call<SessionPageApiInput>): Promise<SessionActivityPage> {
  return ctx.services.sessions.activity(
    input.id,
    { limit: input.limit, offset: input.offset },
    ctx.caller.scope,
  );
}

async function* trackActivity(
  stream: AsyncGenerator<SessionActivity, void, undefined>,
): AsyncGenerator<TrackedEnvelope<SessionActivity>, void, undefined> {
  for await (const entry of stream) yield tracked(String(entry.id), entry);
}

/**
 * `session.*` events as they happen, of one session or of every session in the caller's scope.
 * Each is tracked with its activity id, so a reconnecting client replays what it missed.
 */
export async function watchSessionsHandler({
  ctx,
  input,
  signal,
}: Call<WatchSessionsApiInput> & { signal: AbortSignal | undefined }): Promise<
  AsyncGenerator<TrackedEnvelope<SessionActivity>, void, undefined>
> {
  // Looked up before the stream starts: a session outside the scope fails with NOT_FOUND.
  if (input.sessionId !== undefined) await requireSession(ctx, input.sessionId);
  const stream = ctx.services.sessions.watch(ctx.caller.scope, {
    ...(input.sessionId !== undefined ? { sessionId: input.sessionId } : {}),
    ...(input.lastEventId ? { afterId: Number(input.lastEventId) } : {}),
    ...(signal ? { signal } : {}),
  });
  return Promise.resolve(trackActivity(stream));
}

/** A session as every session answer carries it: with its usage totals. */
async function oneWithUsage(ctx: ApiContext, session: Session): Promise<SessionWithUsage> {
  const [withTotals] = await withUsage(ctx, [session]);
  return withTotals as SessionWithUsage;
}
