import type { HitlDecision, PendingToolCall, Todo } from '@cognition/contracts';
import type { AIMessage, BaseMessage, ToolMessage } from '@langchain/core/messages';
import { isAIMessage } from '@langchain/core/messages';
import type { BaseCheckpointSaver } from '@langchain/langgraph-checkpoint';
import {
  Annotation,
  END,
  START,
  StateGraph,
  interrupt,
  messagesStateReducer,
} from '@langchain/langgraph';
import type { ContextState } from '../context/window';

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

/** The behaviour the graph delegates to the run that executes it. */
export interface AgentGraphSteps {
  /**
   * One model call over the thread: the reply (null when there is nothing to record: aborted
   * early) and, when it changed, the context state to checkpoint with it.
   */
  callModel(
    messages: BaseMessage[],
    context: ContextState | null,
  ): Promise<{ message: AIMessage | null; context?: ContextState | null }>;
  /**
   * The tool calls of `message` that wait for a person's decision before anything runs (the
   * agent's `interrupt_on`); empty: none.
   */
  callsToDecide(message: AIMessage): PendingToolCall[];
  /**
   * Answers every tool call of `message`, in order, following `decisions` where a person gave
   * one (an edited call also replaces `message` with the edited arguments). Never throws for a
   * tool failure.
   */
  runTools(
    message: AIMessage,
    todos: readonly Todo[],
    decisions?: readonly HitlDecision[],
  ): Promise<{ messages: (ToolMessage | AIMessage)[]; todos?: Todo[] }>;
  /** True once the run was aborted: the loop ends after the current step. */
  stopped(): boolean;
  /**
   * Waits until every event emitted so far is in the event log, then returns the id of the
   * last one (null: none). Checkpointed with each step, so a checkpoint never gets ahead of the
   * event log: after a crash, the events of every checkpointed step are all there.
   */
  eventMark(): Promise<string | null>;
}

function lastAiMessage(messages: readonly BaseMessage[]): AIMessage | undefined {
  const last = messages[messages.length - 1];
  return last && isAIMessage(last) ? last : undefined;
}

/** What the graph's `interrupt()` carries when a run pauses for a person's decision. */
export interface DecisionRequest {
  tool_calls: PendingToolCall[];
}

/**
 * model -> (tool calls?) tools -> model ... -> END. An assistant message with tool calls always
 * goes through `tools`, even after an abort (which then answers "not run"), so the checkpoint
 * never holds a tool call without its result — providers reject such a history.
 *
 * Human in the loop: when calls of the message need a decision, `tools` first calls LangGraph's
 * `interrupt()` — before any tool runs, so nothing runs twice when the node is redone — and the
 * graph stops with the thread checkpointed after the model step. Invoking it with
 * `new Command({ resume: decisions })` redoes `tools`, where `interrupt()` returns them.
 */
export function createAgentGraph(steps: AgentGraphSteps, checkpointer?: BaseCheckpointSaver) {
  return new StateGraph(AgentStateAnnotation)
    .addNode('model', async (state: AgentState) => {
      const { message, context } = await steps.callModel(
        visibleHistory(state.messages, state.cleared),
        state.context,
      );
      const messages = message ? [message] : [];
      const eventMark = await steps.eventMark();
      return context === undefined ? { messages, eventMark } : { messages, context, eventMark };
    })
    .addNode('tools', async (state: AgentState) => {
      const message = lastAiMessage(state.messages);
      if (!message) return { messages: [] };
      const toDecide = steps.stopped() ? [] : steps.callsToDecide(message);
      const decisions =
        toDecide.length > 0
          ? interrupt<DecisionRequest, HitlDecision[]>({ tool_calls: toDecide })
          : undefined;
      const result = await steps.runTools(message, state.todos, decisions);
      const eventMark = await steps.eventMark();
      return result.todos
        ? { messages: result.messages, todos: result.todos, eventMark }
        : { messages: result.messages, eventMark };
    })
    .addEdge(START, 'model')
    .addConditionalEdges(
      'model',
      (state: AgentState) => {
        const message = lastAiMessage(state.messages);
        return message && (message.tool_calls?.length ?? 0) > 0 ? 'tools' : END;
      },
      ['tools', END],
    )
    .addConditionalEdges('tools', () => (steps.stopped() ? END : 'model'), ['model', END])
    .compile({ checkpointer });
}

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
