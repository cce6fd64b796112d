import type { ApiServices } from '@cognition/api';
import type { HitlDecision, Run, Session } from '@cognition/contracts';
import { HitlDecisionTypeSchema } from '@cognition/contracts';
import type { Scope } from '@cognition/storage';
import { z } from 'zod';
import { LangGraphHttpError, parsePart, withoutCommandMarkers } from './wire';

/**
 * `command: {resume}` on an agent assistant's thread: the decisions for the tool calls its run
 * paused on (human in the loop), given the way LangChain's human-in-the-loop middleware takes
 * them — `{"decisions": [{"type": "approve"}, …]}`, one per pending call, in order — or with our
 * `tool_call_id`s. The paused run goes on under its own id (our resume), its parts following its
 * interrupt.
 */

const Decision = z
  .object({
    type: HitlDecisionTypeSchema,
    tool_call_id: z.string().min(1).optional(),
    args: z.record(z.string(), z.unknown()).optional(),
    // LangChain's edit decision carries the edited call as `edited_action: {name, args}`.
    edited_action: z
      .object({ args: z.record(z.string(), z.unknown()) })
      .loose()
      .optional(),
    message: z.string().min(1).max(10_000).optional(),
  })
  .strict();

const CommandSchema = z.preprocess(
  withoutCommandMarkers,
  z
    .object({
      resume: z.object({ decisions: z.array(Decision).min(1).max(100) }).strict(),
    })
    .strict(),
);

/** The body's `command` when it is a resume; a 422 naming the field for any other command. */
export function parseCommand(command: unknown): z.output<typeof CommandSchema> {
  return parsePart(z.object({ command: CommandSchema }), { command }, 'body').command;
}

export async function resumeThread(
  services: ApiServices,
  session: Session,
  command: z.output<typeof CommandSchema>,
  scope: Scope,
): Promise<{ run: Run; lastEventId: string | null }> {
  const paused = await services.storage.runs.getActive(session.id);
  if (paused?.status !== 'requires_action' || !paused.pendingAction) {
    throw new LangGraphHttpError(409, 'Thread has no run waiting for a decision');
  }
  const calls = paused.pendingAction.tool_calls;
  const decisions = command.resume.decisions.map((d, i): HitlDecision => {
    const id = d.tool_call_id ?? calls[i]?.id ?? '';
    if (d.type === 'edit')
      return { tool_call_id: id, type: 'edit', args: d.args ?? d.edited_action?.args ?? {} };
    if (d.type === 'reject') {
      return { tool_call_id: id, type: 'reject', ...(d.message ? { message: d.message } : {}) };
    }
    return { tool_call_id: id, type: 'approve' };
  });
  return services.runs.resume(session.id, paused.id, decisions, scope);
}
