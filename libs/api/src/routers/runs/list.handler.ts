import type { Run } from '@cognition/contracts';
import type { ApiContext } from '../../context';
import { requireSession } from '../../lookups';
import type { ListRunsApiInput } from './schemas';

/** The session's runs, newest first; with `status`, only those (`requires_action`: the paused ones). */
export async function listRunsHandler({
  ctx,
  input,
}: {
  ctx: ApiContext;
  input: ListRunsApiInput;
}): Promise<{ runs: Run[] }> {
  await requireSession(ctx, input.sessionId);
  const runs = await ctx.services.storage.runs.list(input.sessionId);
  return { runs: input.status ? runs.filter((run) => run.status === input.status) : runs };
}
