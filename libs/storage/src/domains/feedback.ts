import type { FeedbackInput, MessageFeedback } from '@cognition/contracts';
import type { Scope } from '../scope';

/**
 * Ratings of assistant messages. Each write also moves the session's feedback figures of the
 * aggregates in the same transaction.
 */
export interface FeedbackStore {
  /**
   * Sets (replaces) the feedback of an assistant message. SESSION_NOT_FOUND (missing or outside
   * scope), MESSAGE_NOT_FOUND, VALIDATION_ERROR naming `messageId` for a message that is not
   * the assistant's and naming `score`/`text` for bad input.
   */
  set(
    sessionId: string,
    messageId: string,
    input: FeedbackInput,
    scope: Scope,
  ): Promise<MessageFeedback>;
  /** Removes it; false when there was none. SESSION_NOT_FOUND as for `set`. */
  delete(sessionId: string, messageId: string, scope: Scope): Promise<boolean>;
  /** The feedback of the given messages of a session (scope checked by the caller). */
  forMessages(
    sessionId: string,
    messageIds: readonly string[],
  ): Promise<Map<string, MessageFeedback>>;
}
