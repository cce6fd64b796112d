import type { BaseEvent, Message } from '@ag-ui/core';
import { EventType } from '@ag-ui/core';
import type { AgentEventEnvelope } from '@cognition/contracts';
import { eventData } from '@cognition/contracts';
import { EmittedMessages } from './emitted-messages';

/**
 * Our run events as AG-UI events, for one run: text in text messages (one per model turn, its
 * id derived from the run's event id), tool calls with their args and results (except the
 * results of `answered` calls: the client gave them, a frontend tool's), the plan as state,
 * everything else as `CUSTOM` events named `cognition.<type>`. A run paused for a frontend
 * tool's result ends its stream after the call (`TOOL_CALL_END`, then `RUN_FINISHED`). When the
 * run resumed after a crash and this stream gave the client text (or calls) the crash voided, a
 * `MESSAGES_SNAPSHOT` without them follows the `resumed` event, so the client ends up with the
 * answer once, not a cut-off copy before it.
 */
export class AgUiTranslator {
  private openMessage: string | null = null;
  /** The last event translated was an `interrupt`: the run waits there. */
  private waiting = false;
  private readonly emitted = new EmittedMessages();

  /** `clientMessages`: the messages of the client's input (what it held when it posted). */
  constructor(
    private readonly threadId: string,
    private readonly runId: string,
    private readonly answered: ReadonlySet<string> = new Set(),
    private readonly clientMessages: readonly Message[] = [],
  ) {}

  /**
   * What ends a stream that stopped at the run's interrupt (the run waits there): `RUN_FINISHED`,
   * as AG-UI clients expect after a client-side tool call. Nothing after a stream that stopped
   * otherwise: its terminal event said it, or it was cut off (the client re-attaches).
   */
  end(): BaseEvent[] {
    return this.waiting ? [...this.closeMessage(), this.finished()] : [];
  }

  started(): BaseEvent {
    return { type: EventType.RUN_STARTED, threadId: this.threadId, runId: this.runId };
  }

  translate(envelope: AgentEventEnvelope): BaseEvent[] {
    const { event } = envelope;
    this.waiting = event.type === 'interrupt';
    switch (event.type) {
      case 'token': {
        const out: BaseEvent[] = [];
        if (this.openMessage === null) {
          this.openMessage = `msg-${envelope.id}`;
          out.push({
            type: EventType.TEXT_MESSAGE_START,
            messageId: this.openMessage,
            role: 'assistant',
          });
        }
        this.emitted.text(envelope.id, this.openMessage, event.content);
        out.push({
          type: EventType.TEXT_MESSAGE_CONTENT,
          messageId: this.openMessage,
          delta: event.content,
        });
        return out;
      }
      case 'tool_call':
        this.emitted.toolCall(envelope.id, event.id, event.name, JSON.stringify(event.args));
        return [
          ...this.closeMessage(),
          {
            type: EventType.TOOL_CALL_START,
            toolCallId: event.id,
            toolCallName: event.name,
          },
          {
            type: EventType.TOOL_CALL_ARGS,
            toolCallId: event.id,
            delta: JSON.stringify(event.args),
          },
          { type: EventType.TOOL_CALL_END, toolCallId: event.id },
        ];
      case 'tool_result':
        if (this.answered.has(event.tool_call_id)) return [];
        this.emitted.toolResult(
          envelope.id,
          `tool-${envelope.id}`,
          event.tool_call_id,
          event.output,
        );
        return [
          {
            type: EventType.TOOL_CALL_RESULT,
            messageId: `tool-${envelope.id}`,
            toolCallId: event.tool_call_id,
            content: event.output,
            role: 'tool',
          },
        ];
      case 'planning':
        return [{ type: EventType.STATE_SNAPSHOT, snapshot: { todos: event.todos } }];
      case 'done':
        return [...this.closeMessage(), this.finished()];
      case 'error':
        return [
          ...this.closeMessage(),
          { type: EventType.RUN_ERROR, message: event.message, code: event.code },
        ];
      case 'interrupt':
        // The run waits: for frontend tools' results, which the tool calls just streamed ask
        // for (as AG-UI clients expect), or for a person's decision, said in a custom event.
        // The stream ends here while it waits (then `end()` finishes it); a replay of a run
        // that went on since goes on too.
        return event.tool_calls.every((call) => call.allowed.join() === 'respond')
          ? this.closeMessage()
          : [...this.closeMessage(), this.custom(envelope)];
      case 'resumed': {
        // Taken up again after a crash: the step cut off is produced again, in a new message.
        // What this stream gave after `void_after_event_id` (a replay of the stored events
        // holds it; so does a live stream that saw the crash) is taken back by a snapshot.
        const voidAfter = event.void_after_event_id;
        const out = [...this.closeMessage(), this.custom(envelope)];
        if (!this.emitted.hasAfter(voidAfter)) return out;
        const messages = this.emitted.keptUntil(voidAfter, this.clientMessages);
        return [...out, { type: EventType.MESSAGES_SNAPSHOT, messages }];
      }
      case 'queued':
      case 'reconnected':
      case 'status':
      case 'step_complete':
      case 'delegation':
      case 'artifact':
      case 'usage':
      case 'compaction':
      case 'graph':
        return [this.custom(envelope)];
    }
  }

  private finished(): BaseEvent {
    return {
      type: EventType.RUN_FINISHED,
      threadId: this.threadId,
      runId: this.runId,
    };
  }

  private custom(envelope: AgentEventEnvelope): BaseEvent {
    return {
      type: EventType.CUSTOM,
      name: `cognition.${envelope.event.type}`,
      value: { id: envelope.id, ...eventData(envelope.event) },
    };
  }

  private closeMessage(): BaseEvent[] {
    if (this.openMessage === null) return [];
    const end = { type: EventType.TEXT_MESSAGE_END, messageId: this.openMessage } as BaseEvent;
    this.openMessage = null;
    return [end];
  }
}
