import type { SessionWithUsage } from '@cognition/contracts';
import type { ApiContext } from '../../context';
import type { UpdateSessionApiInput } from './schemas';
import { withUsage } from './usage.handlers';

/**
 * Applies a partial update (metadata and config replace the stored values whole). A new agent or
 * config is checked against the runtime first (422 naming the field). With `expectedVersion` the
 * write only happens if nobody wrote in between (VERSION_CONFLICT otherwise). Goes through the
 * session pipeline as the action `update` (hooks, events, activity log).
 */
export async function updateSessionHandler({
  ctx,
  input,
}: {
  ctx: ApiContext;
  input: UpdateSessionApiInput;
}): Promise<SessionWithUsage> {
  const { id, ...changes } = input;
  await ctx.services.runs.validateSessionInput({
    ...(changes.agentName !== undefined ? { agentName: changes.agentName } : {}),
    ...(changes.config !== undefined ? { config: changes.config } : {}),
  });
  const session = await ctx.services.sessions.update(id, changes, ctx.caller.scope);
  const [withTotals] = await withUsage(ctx, [session]);
  return withTotals as SessionWithUsage;
}
