import type { Session } from '@cognition/contracts';
import type { ApiContext } from '../../context';
import type { UpdateSessionApiInput } from './schemas';

/**
 * Applies a partial update (metadata and config replace the stored values whole). With
 * `expectedVersion` the write only happens if nobody wrote in between (VERSION_CONFLICT otherwise).
 */
export function updateSessionHandler({
  ctx,
  input,
}: {
  ctx: ApiContext;
  input: UpdateSessionApiInput;
}): Promise<Session> {
  const { id, ...changes } = input;
  return ctx.services.storage.sessions.update(id, changes, ctx.caller.scope);
}
