import type {
  AgentEventEnvelope,
  Message as StoredMessage,
  Run,
  RunStatus,
} from '@cognition/contracts';

/*
 * Our runs as A2A tasks, in the A2A v1.0 JSON shapes (the SDK's `fromJSON` turns them into
 * its objects): a task is a run (task id = run id), its context is the run's session.
 */

export type TaskStateName =
  | 'TASK_STATE_SUBMITTED'
  | 'TASK_STATE_WORKING'
  | 'TASK_STATE_COMPLETED'
  | 'TASK_STATE_FAILED'
  | 'TASK_STATE_CANCELED'
  | 'TASK_STATE_INPUT_REQUIRED';

/**
 * A run's status as a task state. `requires_action` (paused for a person's decision on a tool
 * call) is `input-required`; `interrupted` (its process died and it could not be resumed) and
 * `failed` are `failed`; `aborted` is `canceled`.
 */
export function taskState(status: RunStatus): TaskStateName {
  switch (status) {
    case 'pending':
    case 'queued':
      return 'TASK_STATE_SUBMITTED';
    case 'running':
      return 'TASK_STATE_WORKING';
    case 'requires_action':
      return 'TASK_STATE_INPUT_REQUIRED';
    case 'completed':
      return 'TASK_STATE_COMPLETED';
    case 'aborted':
      return 'TASK_STATE_CANCELED';
    case 'failed':
    case 'interrupted':
      return 'TASK_STATE_FAILED';
  }
}

export const isTerminalState = (state: TaskStateName): boolean =>
  state === 'TASK_STATE_COMPLETED' ||
  state === 'TASK_STATE_FAILED' ||
  state === 'TASK_STATE_CANCELED';

export interface JsonMessage {
  messageId: string;
  contextId: string;
  taskId: string;
  role: 'ROLE_USER' | 'ROLE_AGENT';
  parts: { text: string }[];
}

export function agentMessage(
  run: Pick<Run, 'id' | 'sessionId'>,
  text: string,
  messageId: string,
): JsonMessage {
  return {
    messageId,
    contextId: run.sessionId,
    taskId: run.id,
    role: 'ROLE_AGENT',
    parts: [{ text }],
  };
}

/** The artifact that carries a run's answer: one per task, streamed in chunks. */
export function answerArtifact(text: string) {
  return { artifactId: 'answer', name: 'answer', parts: [{ text }] };
}

export interface TaskView {
  run: Run;
  state: TaskStateName;
  /** The final answer (completed tasks), or what the agent asks (input-required). */
  answer: string | null;
  /** A status message: the question of an input-required task, the error of a failed one. */
  statusText: string | null;
}

export function taskJson(view: TaskView) {
  const { run, state, answer, statusText } = view;
  return {
    id: run.id,
    contextId: run.sessionId,
    status: {
      state,
      timestamp: (run.finishedAt ?? run.updatedAt).toISOString(),
      ...(statusText !== null
        ? { message: agentMessage(run, statusText, `${run.id}:status`) }
        : {}),
    },
    artifacts: answer !== null && state === 'TASK_STATE_COMPLETED' ? [answerArtifact(answer)] : [],
    history: [],
    metadata: {},
  };
}

/** What an input-required task asks: the tool calls waiting for a decision. */
export function pendingQuestion(run: Run): string | null {
  const calls = run.pendingAction?.tool_calls ?? [];
  if (calls.length === 0) return null;
  const listed = calls.map((call) => `${call.name} ${JSON.stringify(call.args)}`).join('; ');
  return `Approve the tool call(s)? ${listed} — answer "approve" or "reject" in this task.`;
}

/**
 * The answer of `run` from the session's messages: the last assistant message after the run's
 * input message and before the next user message.
 */
export function answerFromMessages(run: Run, messages: StoredMessage[]): string | null {
  const start = messages.findIndex((m) => m.id === run.inputMessageId);
  if (start === -1) return null;
  let answer: string | null = null;
  for (const message of messages.slice(start + 1)) {
    if (message.role === 'user') break;
    if (message.role === 'assistant' && message.content !== '') answer = message.content;
  }
  return answer;
}

/** A run's event as the A2A stream responses it becomes (none for most bookkeeping events). */
export function streamResponses(run: Run, envelope: AgentEventEnvelope): object[] {
  const { event } = envelope;
  const ids = { taskId: run.id, contextId: run.sessionId };
  const status = (state: TaskStateName, text?: string) => ({
    statusUpdate: {
      ...ids,
      status: {
        state,
        timestamp: new Date().toISOString(),
        ...(text !== undefined ? { message: agentMessage(run, text, envelope.id) } : {}),
      },
    },
  });
  switch (event.type) {
    case 'token':
      return [
        {
          artifactUpdate: {
            ...ids,
            artifact: answerArtifact(event.content),
            append: true,
            lastChunk: false,
          },
        },
      ];
    case 'resumed':
      // The step cut off by a crash is void: the answer starts again.
      return [
        {
          artifactUpdate: { ...ids, artifact: answerArtifact(''), append: false, lastChunk: false },
        },
      ];
    case 'tool_call':
      return [status('TASK_STATE_WORKING', `calling ${event.name}`)];
    case 'done':
      return [
        {
          artifactUpdate: {
            ...ids,
            artifact: answerArtifact(event.assistant_data?.content ?? ''),
            append: false,
            lastChunk: true,
          },
        },
        status('TASK_STATE_COMPLETED'),
      ];
    case 'error':
      return [
        status(
          event.code === 'ABORTED' ? 'TASK_STATE_CANCELED' : 'TASK_STATE_FAILED',
          `${event.code}: ${event.message}`,
        ),
      ];
    case 'interrupt': {
      const listed = event.tool_calls.map((c) => `${c.name} ${JSON.stringify(c.args)}`).join('; ');
      return [
        status(
          'TASK_STATE_INPUT_REQUIRED',
          `Approve the tool call(s)? ${listed} — answer "approve" or "reject" in this task.`,
        ),
      ];
    }
    case 'queued':
    case 'reconnected':
    case 'status':
    case 'tool_result':
    case 'planning':
    case 'step_complete':
    case 'delegation':
    case 'artifact':
    case 'usage':
    case 'compaction':
    case 'graph':
      return [];
  }
}
