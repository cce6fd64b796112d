import type { Message } from '@ag-ui/core';

/** One piece of what a stream gave the client, with the id of the run event it came from. */
interface Piece {
  eventId: string;
  messageId: string;
  message: () => Message;
  /** Text appended to the message (`TEXT_MESSAGE_CONTENT`), for text messages. */
  delta?: string;
}

/**
 * The messages one AG-UI stream has given its client, as the client holds them (a text message
 * per `TEXT_MESSAGE_START` id; a tool call without a parent message becomes an assistant message
 * with the call's id, as `@ag-ui/client` applies it; a tool result a tool message), each piece
 * tagged with its run event id. When the run resumes after a crash, what came after the
 * `resumed` event's `void_after_event_id` is void: `keptUntil` is what the client should keep.
 */
export class EmittedMessages {
  private pieces: Piece[] = [];

  text(eventId: string, messageId: string, delta: string): void {
    this.pieces.push({
      eventId,
      messageId,
      delta,
      message: () => ({ id: messageId, role: 'assistant', content: '' }),
    });
  }

  toolCall(eventId: string, id: string, name: string, args: string): void {
    this.pieces.push({
      eventId,
      messageId: id,
      message: () => ({
        id,
        role: 'assistant',
        toolCalls: [{ id, type: 'function', function: { name, arguments: args } }],
      }),
    });
  }

  toolResult(eventId: string, messageId: string, toolCallId: string, content: string): void {
    this.pieces.push({
      eventId,
      messageId,
      message: () => ({ id: messageId, role: 'tool', toolCallId, content }),
    });
  }

  /** Whether anything was given after `eventId` (ids of one run sort in their order). */
  hasAfter(eventId: string): boolean {
    return this.pieces.some((piece) => piece.eventId > eventId);
  }

  /**
   * Forgets the pieces after `eventId` and returns the messages the client should hold: its own
   * (`client`, as it posted them; a message of ours it posted back is replaced by ours, a void
   * one dropped), then those this stream gave up to `eventId`.
   */
  keptUntil(eventId: string, client: readonly Message[]): Message[] {
    const given = new Set(this.pieces.map((piece) => piece.messageId));
    this.pieces = this.pieces.filter((piece) => piece.eventId <= eventId);
    const kept = new Map<string, Message>();
    for (const piece of this.pieces) {
      const message = kept.get(piece.messageId) ?? piece.message();
      if (piece.delta !== undefined && message.role === 'assistant')
        message.content = `${message.content ?? ''}${piece.delta}`;
      kept.set(piece.messageId, message);
    }
    return [...client.filter((message) => !given.has(message.id)), ...kept.values()];
  }
}
