import type { Session } from '@cognition/contracts';
import type { ApiContext } from '../../context';
import { ApiError } from '../../errors';
import type { SessionIdInput } from './schemas';

/** A session outside the caller's scope is reported exactly like a missing one. */
export async function getSessionHandler({
  ctx,
  input,
}: {
  ctx: ApiContext;
  input: SessionIdInput;
}): Promise<Session> {
  const session = await ctx.services.storage.sessions.get(input.id, ctx.caller.scope);
  if (!session) throw new ApiError('SESSION_NOT_FOUND', `Session not found: ${input.id}`);
  return session;
}
