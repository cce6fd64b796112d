import type {
  CreateMessageInput,
  Message,
  MessagePage,
  MessagePageQuery,
} from '@cognition/contracts';
import type { Scope } from '../scope';

export interface MessageStore {
  /**
   * Inserts a message and increments the session's messageCount in one atomic step.
   * Throws SESSION_NOT_FOUND when the session does not exist.
   */
  create(input: CreateMessageInput): Promise<Message>;
  /** null when missing, belonging to another session, or the session is outside scope. */
  get(sessionId: string, messageId: string, scope: Scope): Promise<Message | null>;
  /**
   * Thread order (oldest first) or, with `order: 'desc'`, newest first; offsets count in the
   * chosen order and pages are stable across calls. SESSION_NOT_FOUND outside scope.
   */
  page(sessionId: string, query: MessagePageQuery, scope: Scope): Promise<MessagePage>;
  /** Every message of the session in thread order. */
  listAll(sessionId: string, scope: Scope): Promise<Message[]>;
  /** Deletes every message of the session and resets its messageCount; returns how many. */
  deleteBySession(sessionId: string): Promise<number>;
}
