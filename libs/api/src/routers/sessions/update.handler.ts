import type { Session } from '@cognition/contracts';
import type { ApiContext } from '../../context';
import type { UpdateSessionApiInput } from './schemas';

/**
 * Applies a partial update (metadata and config replace the stored values whole). A new agent or
 * config is checked against the runtime first (422 naming the field). With `expectedVersion` the
 * write only happens if nobody wrote in between (VERSION_CONFLICT otherwise). Goes through the
 * session pipeline as the action `update` (hooks, events, activity log).
 */
export function updateSessionHandler({
  ctx,
  input,
}: {
  ctx: ApiContext;
  input: UpdateSessionApiInput;
}): Promise<Session> {
  const { id, ...changes } = input;
  ctx.services.runs.validateSessionInput({
    ...(changes.agentName !== undefined ? { agentName: changes.agentName } : {}),
    ...(changes.config !== undefined ? { config: changes.config } : {}),
  });
  return ctx.services.sessions.update(id, changes, ctx.caller.scope);
}
