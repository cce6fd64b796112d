import type { Message } from '@cognition/contracts';
import type { ApiContext } from '../../context';
import { ApiError } from '../../errors';
import { withFeedback } from './feedback.handlers';
import type { GetMessageApiInput } from './schemas';

/**
 * One message of one session. The session is resolved first so an unknown or out-of-scope
 * session reads "Session not found" and a message of another session reads "Message not found".
 */
export async function getMessageHandler({
  ctx,
  input,
}: {
  ctx: ApiContext;
  input: GetMessageApiInput;
}): Promise<Message> {
  const { storage } = ctx.services;
  const session = await storage.sessions.get(input.sessionId, ctx.caller.scope);
  if (!session) throw new ApiError('SESSION_NOT_FOUND', `Session not found: ${input.sessionId}`);
  const message = await storage.messages.get(input.sessionId, input.messageId, ctx.caller.scope);
  if (!message) throw new ApiError('MESSAGE_NOT_FOUND', `Message not found: ${input.messageId}`);
  const [withRating] = await withFeedback(ctx, input.sessionId, [message]);
  return withRating as Message;
}
