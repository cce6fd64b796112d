import type { SessionPendingAction, SessionWithUsage } from '@cognition/contracts';
import type { ApiContext } from '../../context';
import { ApiError } from '../../errors';
import type { SessionIdInput } from './schemas';
import { withUsage } from './usage.handlers';

/** One session as `sessions.get` answers it: with usage, and the decision its run waits for. */
export type SessionDetail = SessionWithUsage & { pendingAction: SessionPendingAction | null };

/**
 * A session outside the caller's scope is reported exactly like a missing one. Carries its usage
 * totals and, while its run waits for a person's decision, what it waits for.
 */
export async function getSessionHandler({
  ctx,
  input,
}: {
  ctx: ApiContext;
  input: SessionIdInput;
}): Promise<SessionDetail> {
  const session = await ctx.services.storage.sessions.get(input.id, ctx.caller.scope);
  if (!session) throw new ApiError('SESSION_NOT_FOUND', `Session not found: ${input.id}`);
  const [enriched] = await withUsage(ctx, [session]);
  const held = await ctx.services.storage.runs.getActive(session.id);
  const pendingAction =
    held?.status === 'requires_action' && held.pendingAction
      ? { runId: held.id, toolCalls: held.pendingAction.tool_calls }
      : null;
  return { ...(enriched as SessionWithUsage), pendingAction };
}
