import type { HitlDecision, PendingToolCall, Todo } from '@cognition/contracts';
import type { AIMessage, BaseMessage, ToolMessage } from '@langchain/core/messages';
import { isAIMessage } from '@langchain/core/messages';
import type { BaseCheckpointSaver } from '@langchain/langgraph-checkpoint';
import { END, START, StateGraph, interrupt } from '@langchain/langgraph';
import type { AgentState, ContextState } from './agent-state';
import { AgentStateAnnotation, visibleHistory } from './agent-state';

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
   * Throws when the run was aborted because another process owns it now: the step must not be
   * checkpointed (not even as the end of the run), since the owner redoes it.
   */
  checkOwned?(): void;
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
      steps.checkOwned?.();
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
      // A run lost meanwhile must not go to END from here (checkpointed, the new owner would
      // find it finished without an answer): the step fails and the owner redoes it.
      steps.checkOwned?.();
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
