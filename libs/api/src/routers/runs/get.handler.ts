import type { Run } from '@cognition/contracts';
import type { ApiContext } from '../../context';
import { ApiError } from '../../errors';
import { requireSession } from '../../lookups';
import type { CallbackAttemptRecord } from '../../services/run-service';
import type { GetRunApiInput } from './schemas';

/** A run with its completion-callback attempts (oldest first; empty without a callback). */
export type RunDetail = Run & { callbackAttempts: CallbackAttemptRecord[] };

/** One run of one session; a run of another session reads "Run not found". */
export async function getRunHandler({
  ctx,
  input,
}: {
  ctx: ApiContext;
  input: GetRunApiInput;
}): Promise<RunDetail> {
  await requireSession(ctx, input.sessionId);
  const run = await ctx.services.storage.runs.get(input.runId);
  if (!run || run.sessionId !== input.sessionId) {
    throw new ApiError('RUN_NOT_FOUND', `Run not found: ${input.runId}`);
  }
  return { ...run, callbackAttempts: await ctx.services.runs.callbackAttempts(run.id) };
}
