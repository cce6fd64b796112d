import type { ApiContext } from '../../context';
import type { RunSendResult } from '../../services/run-service';
import type { SendMessageApiInput } from './schemas';

/**
 * Persists the user message and starts a run answering it; the run's events are then read with
 * `runs.events({ sessionId, runId })`, which replays from the run's first event, so nothing is
 * missed between this call and the subscription. A retried `idempotencyKey` returns the first
 * run with `created: false`. A session busy with another run answers RUN_IN_PROGRESS in the
 * runtime's words, which say what to do (wait, abort, resume, or another multitask strategy).
 */
export function sendMessageHandler({
  ctx,
  input,
}: {
  ctx: ApiContext;
  input: SendMessageApiInput;
}): Promise<RunSendResult> {
  return ctx.services.runs.scheduler.send({ ...input, scope: ctx.caller.scope });
}
