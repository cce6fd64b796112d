import type { ApiContext } from '../../context';
import { ApiError } from '../../errors';
import type { SessionIdInput } from './schemas';

/** Deletes the session with its messages, runs and checkpoints; 404 when missing or out of scope. */
export async function deleteSessionHandler({
  ctx,
  input,
}: {
  ctx: ApiContext;
  input: SessionIdInput;
}): Promise<{ deleted: true }> {
  const deleted = await ctx.services.storage.sessions.delete(input.id, ctx.caller.scope);
  if (!deleted) throw new ApiError('SESSION_NOT_FOUND', `Session not found: ${input.id}`);
  return { deleted: true };
}
