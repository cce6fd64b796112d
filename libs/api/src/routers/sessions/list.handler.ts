import type { ApiContext } from '../../context';
import type { ListSessionsApiInput } from './schemas';
import type { SessionPageWithUsage } from './usage.handlers';
import { withUsage } from './usage.handlers';

/**
 * Sessions visible to the caller, filtered by status and metadata, newest activity first, each
 * with its usage totals.
 */
export async function listSessionsHandler({
  ctx,
  input,
}: {
  ctx: ApiContext;
  input: ListSessionsApiInput;
}): Promise<SessionPageWithUsage> {
  const page = await ctx.services.storage.sessions.list(input, ctx.caller.scope);
  return { ...page, sessions: await withUsage(ctx, page.sessions) };
}
