import type { SessionPage } from '@cognition/contracts';
import type { ApiContext } from '../../context';
import type { ListSessionsApiInput } from './schemas';

/** Sessions visible to the caller, filtered by status and metadata, newest activity first. */
export function listSessionsHandler({
  ctx,
  input,
}: {
  ctx: ApiContext;
  input: ListSessionsApiInput;
}): Promise<SessionPage> {
  return ctx.services.storage.sessions.list(input, ctx.caller.scope);
}
