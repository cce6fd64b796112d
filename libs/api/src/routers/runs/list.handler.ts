import type { Run } from '@cognition/contracts';
import type { ApiContext } from '../../context';
import { requireSession } from '../../lookups';
import type { RunSessionInput } from './schemas';

/** The session's runs, newest first. */
export async function listRunsHandler({
  ctx,
  input,
}: {
  ctx: ApiContext;
  input: RunSessionInput;
}): Promise<{ runs: Run[] }> {
  await requireSession(ctx, input.sessionId);
  return { runs: await ctx.services.storage.runs.list(input.sessionId) };
}
