import type { ClientTool, HitlDecision, Message, Session } from '@cognition/contracts';
import type { StorageBackend } from '@cognition/storage';
import { HumanMessage, ToolMessage } from '@langchain/core/messages';
import type { BaseMessage } from '@langchain/core/messages';
import { Command } from '@langchain/langgraph';
import type { createAgentGraph } from '../../graph/agent-graph';
import { danglingToolCalls } from '../../graph/agent-state';
import { newMessageId } from '../../ids';
import type { RuntimeTool } from '../../tools/types';
import { kwargs } from '../run-context';
import type { RunContext } from '../run-context';
import type { RegistrySnapshot } from '../../registry/config-registry';
import { TOOL_EXIT } from './tool-call';

/** An agent run: the user message it answers, in its session. */
export interface AgentRunInput {
  session: Session;
  userMessage: Message;
  callbackUrl: string | null;
  /**
   * Taken up again after the process executing it died: continues from the thread's last
   * checkpoint (the cut-off step is redone) instead of starting from the user message.
   */
  resumed?: boolean;
  /**
   * A person's decisions on the tool calls the run paused for (human in the loop): the graph
   * continues from its checkpoint with them.
   */
  decisions?: HitlDecision[];
  /**
   * Set by the send that just created the run: it has not started and spent nothing yet, and
   * `registry` is the snapshot the send checked the agent in. Saves reading the run and the
   * registry again at the start of every turn; without it (recovery, resume, a run promoted
   * from `pending`) both are read, and the client tools from the run's stored input.
   */
  fresh?: { registry: RegistrySnapshot; clientTools: ClientTool[] };
}

type AgentGraphInput = Parameters<ReturnType<typeof createAgentGraph>['invoke']>[0];

/**
 * What an agent run's graph is invoked with (run-executor.ts invokes it): a person's decisions,
 * nothing (a resumed turn the checkpoint holds), or the user message with what the thread lacks
 * before it.
 */
export async function turnInput(
  ctx: Pick<RunContext, 'storage'>,
  runId: string,
  input: AgentRunInput,
  thread: { history: readonly BaseMessage[]; next: readonly string[] },
  resumed: { tools: readonly RuntimeTool[]; interruptedCalls: Set<string> },
): Promise<AgentGraphInput> {
  const { session, userMessage } = input;
  const { history } = thread;
  if (input.decisions) {
    // Redoes the `tools` step the run paused in, where `interrupt()` returns the decisions.
    return new Command({ resume: input.decisions });
  }
  if (input.resumed && history.some((m) => m.id === userMessage.id)) {
    // The checkpoint holds this run's turn: continue it. LangGraph applies the writes of
    // steps that completed after the last checkpoint and redoes the one that was cut off
    // (nothing, if only the finishing was).
    if (thread.next.includes('tools')) {
      for (const id of unsafeToRepeat(history, resumed.tools)) resumed.interruptedCalls.add(id);
    }
    return null;
  }
  const unanswered = await earlierInputs(ctx.storage, session.id, runId, history);
  return { messages: [...repairs(history), ...unanswered.map(human), human(userMessage)] };
}

/** Answers for tool calls a crash left without result, before the next model call. */
function repairs(history: readonly BaseMessage[]): ToolMessage[] {
  return danglingToolCalls(history).map(
    (call) =>
      new ToolMessage({
        id: newMessageId(),
        tool_call_id: call.id,
        name: call.name,
        content: 'Not run: the previous run was interrupted.',
        status: 'error',
        additional_kwargs: kwargs(null, { exitCode: String(TOOL_EXIT.aborted) }),
      }),
  );
}

function human(userMessage: Message): HumanMessage {
  return new HumanMessage({
    id: userMessage.id,
    content: userMessage.content,
    additional_kwargs: kwargs(userMessage.parentId, userMessage.metadata),
  });
}

/**
 * User messages of earlier runs that ended before their turn entered the thread (aborted or
 * interrupted while waiting for a slot, or superseded by a double-texted message): they join
 * the thread with this turn, in order, so the history reads as they were sent (else their rows
 * would stay pending and float after every later turn) and the model sees what the user said.
 * Walks back from this run only until a run whose message the thread holds (usually one step).
 */
async function earlierInputs(
  storage: StorageBackend,
  sessionId: string,
  runId: string,
  history: readonly BaseMessage[],
): Promise<Message[]> {
  const inThread = new Set(history.map((m) => m.id));
  // The session is the executor's: the run need not be read for it.
  const runs = await storage.runs.list(sessionId);
  const at = runs.findIndex((r) => r.id === runId);
  if (at < 0) return [];
  const found: Message[] = [];
  for (const earlier of runs.slice(at + 1)) {
    if (earlier.status === 'pending' || earlier.inputMessageId === null) continue;
    if (inThread.has(earlier.inputMessageId)) break;
    const message = await storage.messages.get(sessionId, earlier.inputMessageId, {});
    if (message) found.unshift(message);
  }
  return found;
}

/** Unanswered calls of the last assistant message whose tool must not run twice. */
function unsafeToRepeat(history: readonly BaseMessage[], tools: readonly RuntimeTool[]): string[] {
  const unsafe = new Set<string>(tools.filter((t) => !t.idempotent).map((t) => t.name));
  return danglingToolCalls(history)
    .filter((call) => unsafe.has(call.name))
    .map((call) => call.id);
}
