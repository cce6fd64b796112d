import type { Session } from '@cognition/contracts';
import type { ApiContext } from '../../context';
import type { CreateSessionApiInput } from './schemas';

/** Creates an `active` session whose scopes are the caller's scope (never taken from the body). */
export function createSessionHandler({
  ctx,
  input,
}: {
  ctx: ApiContext;
  input: CreateSessionApiInput;
}): Promise<Session> {
  return ctx.services.storage.sessions.create(input, ctx.caller.scope);
}
