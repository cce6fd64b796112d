import type { SessionWithUsage } from '@cognition/contracts';
import type { ApiContext } from '../../context';
import { ApiError } from '../../errors';
import type { SessionIdInput } from './schemas';
import { withUsage } from './usage.handlers';

/**
 * A session outside the caller's scope is reported exactly like a missing one. Carries its usage
 * totals.
 */
export async function getSessionHandler({
  ctx,
  input,
}: {
  ctx: ApiContext;
  input: SessionIdInput;
}): Promise<SessionWithUsage> {
  const session = await ctx.services.storage.sessions.get(input.id, ctx.caller.scope);
  if (!session) throw new ApiError('SESSION_NOT_FOUND', `Session not found: ${input.id}`);
  const [enriched] = await withUsage(ctx, [session]);
  return enriched as SessionWithUsage;
}
