import type { SummaryCoverage, Todo } from '@cognition/contracts';
import type { BaseMessage } from '@langchain/core/messages';
import { isAIMessage } from '@langchain/core/messages';
import { Annotation, messagesStateReducer } from '@langchain/langgraph';

/**
 * The context part of an agent thread's state (a graph channel, checkpointed with the messages):
 * the summary of the oldest messages and which messages left the model's window. The
 * checkpoint's message list is never shortened: `compacted` only says where the window starts.
 */
export interface ContextState {
  /** Text standing for the compacted messages (strategy `summarize`); null otherwise. */
  summary: string | null;
  /** The oldest messages of the thread that the model no longer sees verbatim. */
  compacted: SummaryCoverage | null;
  /**
   * Provider-reported input tokens / counted tokens of the last call that reported usage, when
   * above 1: later counts are scaled up by it (a provider count is never overridden downwards).
   */
  token_ratio?: number;
}

/**
 * The state of an agent thread, checkpointed after every step: the conversation (LangGraph's
 * messages reducer: append, replace by id), the current plan (replaced whole), the step's event
 * mark, and the context state (summary and compacted range, replaced whole; the messages
 * themselves are never removed).
 */
export const AgentStateAnnotation = Annotation.Root({
  messages: Annotation<BaseMessage[]>({ reducer: messagesStateReducer, default: () => [] }),
  todos: Annotation<Todo[]>({ reducer: (_previous, next) => next, default: () => [] }),
  /**
   * The id of the last event the run had emitted (and stored) when the step that wrote this
   * checkpoint ended: after a crash, whatever the run streamed after it belongs to a step the checkpoint
   * does not hold (void, produced again by the resumed run).
   */
  eventMark: Annotation<string | null>({ reducer: (_previous, next) => next, default: () => null }),
  context: Annotation<ContextState | null>({
    reducer: (_previous, next) => next,
    default: () => null,
  }),
  /**
   * Set by the session action `clear`: the model sees only the messages after this mark (the
   * checkpoint and the message history keep all of them).
   */
  cleared: Annotation<ClearedMark | null>({
    reducer: (_previous, next) => next,
    default: () => null,
  }),
});

/** Where a cleared thread starts for the model: after `message_count` messages ending at `last_message_id`. */
export interface ClearedMark {
  message_count: number;
  last_message_id: string | null;
}

/** The channel names of the agent state that session actions rewrite (clear, fork). */
export const AGENT_STATE_CHANNELS = {
  messages: 'messages',
  context: 'context',
  eventMark: 'eventMark',
  cleared: 'cleared',
} as const;

/**
 * The part of the thread the model is shown: everything after the clear mark. A mark that no
 * longer matches the thread (its message is gone) shows the whole thread.
 */
export function visibleHistory(
  messages: readonly BaseMessage[],
  cleared: ClearedMark | null | undefined,
): BaseMessage[] {
  if (!cleared || cleared.last_message_id === null) return [...messages];
  const index = messages.findIndex((m) => m.id === cleared.last_message_id);
  return index < 0 ? [...messages] : messages.slice(index + 1);
}
export type AgentState = typeof AgentStateAnnotation.State;

/**
 * Tool calls of the thread's last assistant message that have no result (the process died while
 * tools ran). They must be answered before the next model call.
 */
export function danglingToolCalls(
  messages: readonly BaseMessage[],
): { id: string; name: string }[] {
  for (let i = messages.length - 1; i >= 0; i -= 1) {
    const message = messages[i];
    if (!message || !isAIMessage(message)) continue;
    const answered = new Set(
      messages
        .slice(i + 1)
        .map((m) => (m as { tool_call_id?: string }).tool_call_id)
        .filter((id): id is string => typeof id === 'string'),
    );
    return (message.tool_calls ?? [])
      .filter((call): call is typeof call & { id: string } => typeof call.id === 'string')
      .filter((call) => !answered.has(call.id))
      .map((call) => ({ id: call.id, name: call.name }));
  }
  return [];
}
