import type { ApiContext } from '../../context';
import type { RunResumeResult } from '../../services/run-service';
import type { ResumeRunApiInput } from './schemas';

/**
 * Resumes a run paused for a person's decision (human in the loop). Returns the run (status
 * `queued`) and `lastEventId`, its `interrupt` event's id: `runs.events` with it follows exactly
 * what the run does from now on.
 */
export function resumeRunHandler({
  ctx,
  input,
}: {
  ctx: ApiContext;
  input: ResumeRunApiInput;
}): Promise<RunResumeResult> {
  return ctx.services.runs.resume(input.sessionId, input.runId, input.decisions, ctx.caller.scope);
}
