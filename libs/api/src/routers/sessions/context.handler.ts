import type { ContextWindowView } from '@cognition/contracts';
import type { ApiContext } from '../../context';
import type { SessionIdInput } from './schemas';

/**
 * What the session's next model call would be sent (tokens per part, budget, window, summary
 * and the messages it covers). A session outside the caller's scope is a 404 like a missing one.
 */
export function sessionContextHandler({
  ctx,
  input,
}: {
  ctx: ApiContext;
  input: SessionIdInput;
}): Promise<ContextWindowView> {
  return ctx.services.context.view(input.id, ctx.caller.scope);
}
