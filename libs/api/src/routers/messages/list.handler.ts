import type { MessagePage } from '@cognition/contracts';
import type { ApiContext } from '../../context';
import type { ListMessagesApiInput } from './schemas';

/** A page of the session's messages in thread order; SESSION_NOT_FOUND outside the caller's scope. */
export function listMessagesHandler({
  ctx,
  input,
}: {
  ctx: ApiContext;
  input: ListMessagesApiInput;
}): Promise<MessagePage> {
  const { sessionId, ...page } = input;
  return ctx.services.storage.messages.page(sessionId, page, ctx.caller.scope);
}
