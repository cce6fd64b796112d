import type { ApiContext } from '../../context';
import type { RebuildMessagesApiInput } from './schemas';

/**
 * Operator action: rewrites the session's message rows from its thread's latest checkpoint (the
 * authoritative record), keeping accepted user messages not yet checkpointed; returns the
 * resulting row count.
 */
export function rebuildMessagesHandler({
  ctx,
  input,
}: {
  ctx: ApiContext;
  input: RebuildMessagesApiInput;
}): Promise<{ messages: number }> {
  return ctx.services.sessions.rebuildMessages(input.sessionId, ctx.caller.scope);
}
