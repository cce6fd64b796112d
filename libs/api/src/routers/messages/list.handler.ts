import type { MessagePage } from '@cognition/contracts';
import type { ApiContext } from '../../context';
import { withFeedback } from './feedback.handlers';
import type { ListMessagesApiInput } from './schemas';

/**
 * A page of the session's messages in thread order, assistant messages with their `feedback`;
 * SESSION_NOT_FOUND outside the caller's scope.
 */
export async function listMessagesHandler({
  ctx,
  input,
}: {
  ctx: ApiContext;
  input: ListMessagesApiInput;
}): Promise<MessagePage> {
  const { sessionId, ...page } = input;
  const result = await ctx.services.storage.messages.page(sessionId, page, ctx.caller.scope);
  return { ...result, messages: await withFeedback(ctx, sessionId, result.messages) };
}
