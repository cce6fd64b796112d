import type { ApiContext } from '../../context';
import type { RunAbortResult } from '../../services/run-service';
import type { RunSessionInput } from './schemas';

/**
 * Cancels the session's active run; what it produced so far is kept and its stream ends with
 * `error { code: 'ABORTED' }`. `aborted: false` (and `run: null`) when nothing was running.
 */
export function abortRunHandler({
  ctx,
  input,
}: {
  ctx: ApiContext;
  input: RunSessionInput;
}): Promise<RunAbortResult> {
  return ctx.services.runs.abort(input.sessionId, ctx.caller.scope);
}
