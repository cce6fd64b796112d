import type { SessionWithUsage } from '@cognition/contracts';
import type { ApiContext } from '../../context';
import type { CreateSessionApiInput } from './schemas';
import { withUsage } from './usage.handlers';

/**
 * Creates an `active` session whose scopes are the caller's scope (never taken from the body).
 * The agent and LLM overrides are checked against the runtime first (unknown or subagent-only
 * agent, unknown provider, model no enabled provider serves: 422 naming the field), so a session
 * that could never run is not stored.
 */
export async function createSessionHandler({
  ctx,
  input,
}: {
  ctx: ApiContext;
  input: CreateSessionApiInput;
}): Promise<SessionWithUsage> {
  await ctx.services.runs.validateSessionInput({
    agentName: input.agentName,
    config: input.config,
  });
  const session = await ctx.services.sessions.create(input, ctx.caller.scope);
  const [withTotals] = await withUsage(ctx, [session]);
  return withTotals as SessionWithUsage;
}
