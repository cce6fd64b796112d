import type { Message, MessageFeedback } from '@cognition/contracts';
import type { ApiContext } from '../../context';
import { ApiError } from '../../errors';
import type { DeleteFeedbackApiInput, SetFeedbackApiInput } from './feedback.schemas';

/** `messages.setFeedback`: sets or replaces the rating of an assistant message (idempotent). */
export function setFeedbackHandler({
  ctx,
  input,
}: {
  ctx: ApiContext;
  input: SetFeedbackApiInput;
}): Promise<MessageFeedback> {
  const { sessionId, messageId, ...feedback } = input;
  return ctx.services.storage.feedback.set(sessionId, messageId, feedback, ctx.caller.scope);
}

/**
 * `messages.deleteFeedback`: removes the rating; `deleted: false` when there was none (deleting
 * twice is not an error). The message must exist.
 */
export async function deleteFeedbackHandler({
  ctx,
  input,
}: {
  ctx: ApiContext;
  input: DeleteFeedbackApiInput;
}): Promise<{ deleted: boolean }> {
  const { storage } = ctx.services;
  const session = await storage.sessions.get(input.sessionId, ctx.caller.scope);
  if (!session) throw new ApiError('SESSION_NOT_FOUND', `Session not found: ${input.sessionId}`);
  const message = await storage.messages.get(input.sessionId, input.messageId, ctx.caller.scope);
  if (!message) throw new ApiError('MESSAGE_NOT_FOUND', `Message not found: ${input.messageId}`);
  const deleted = await storage.feedback.delete(input.sessionId, input.messageId, ctx.caller.scope);
  return { deleted };
}

/** Messages with their `feedback` (null when unrated), in one read. */
export async function withFeedback(
  ctx: ApiContext,
  sessionId: string,
  messages: Message[],
): Promise<Message[]> {
  const rated = messages.filter((m) => m.role === 'assistant').map((m) => m.id);
  const feedback =
    rated.length === 0
      ? new Map<string, MessageFeedback>()
      : await ctx.services.storage.feedback.forMessages(sessionId, rated);
  return messages.map((message) => ({ ...message, feedback: feedback.get(message.id) ?? null }));
}
