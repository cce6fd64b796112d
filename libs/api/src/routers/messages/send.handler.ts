import type { ApiContext } from '../../context';
import { ApiError } from '../../errors';
import type { RunSendResult } from '../../run-service';
import type { SendMessageApiInput } from './schemas';

function hasCode(error: unknown, code: string): boolean {
  return (error as { code?: unknown } | null)?.code === code;
}

/**
 * Persists the user message and starts a run answering it; the run's events are then read with
 * `runs.events({ sessionId, runId })`, which replays from the run's first event, so nothing is
 * missed between this call and the subscription. A retried `idempotencyKey` returns the first
 * run with `created: false`.
 */
export async function sendMessageHandler({
  ctx,
  input,
}: {
  ctx: ApiContext;
  input: SendMessageApiInput;
}): Promise<RunSendResult> {
  try {
    return await ctx.services.runs.send({ ...input, scope: ctx.caller.scope });
  } catch (error) {
    // Storage and runtime word this differently; callers get one actionable message — or,
    // when a run waits for a decision, the runtime's, which names the run to resume.
    if (hasCode(error, 'RUN_IN_PROGRESS')) {
      const held = await ctx.services.storage.runs.getActive(input.sessionId);
      if (held?.status === 'requires_action') throw error;
      throw new ApiError(
        'RUN_IN_PROGRESS',
        `A run is in progress on session ${input.sessionId}: wait for its terminal event, abort it, or send with multitaskStrategy enqueue, interrupt or rollback`,
        { cause: error },
      );
    }
    throw error;
  }
}
