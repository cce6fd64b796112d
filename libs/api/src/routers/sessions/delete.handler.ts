import type { ApiContext } from '../../context';
import { ApiError } from '../../errors';
import { requireSession } from '../../lookups';
import type { SessionIdInput } from './schemas';

/**
 * Deletes the session with its messages, runs and checkpoints; 404 when missing or out of scope.
 * Its run is cancelled, its events forgotten and its sandbox released BEFORE the rows go, so a
 * failing release leaves the session in place for a retry instead of orphaning a container.
 */
export async function deleteSessionHandler({
  ctx,
  input,
}: {
  ctx: ApiContext;
  input: SessionIdInput;
}): Promise<{ deleted: true }> {
  await requireSession(ctx, input.id);
  await ctx.services.runs.forgetSession(input.id);
  await ctx.services.sandbox?.release(input.id);
  const deleted = await ctx.services.storage.sessions.delete(input.id, ctx.caller.scope);
  if (!deleted) throw new ApiError('SESSION_NOT_FOUND', `Session not found: ${input.id}`);
  return { deleted: true };
}
