import type { Message, MessageRole, ToolCall } from '@cognition/contracts';
import type { BaseMessage } from '@langchain/core/messages';

/**
 * Key under `additional_kwargs` where the runtime stores what the projection needs and a
 * LangChain message has no field for (the parent message id and caller metadata).
 */
export const COGNITION_KWARGS_KEY = 'cognition';

export interface CognitionMessageKwargs {
  parentId?: string | null;
  metadata?: Record<string, string>;
}

/** A message row derived from a checkpoint, before the backend stamps `createdAt`. */
export type ProjectedMessage = Omit<Message, 'createdAt'> & { seq: number };

const ROLE_BY_TYPE: Record<string, MessageRole> = {
  human: 'user',
  ai: 'assistant',
  system: 'system',
  tool: 'tool',
  generic: 'user',
};

function textOf(content: BaseMessage['content']): string {
  if (typeof content === 'string') return content;
  return content
    .map((part) =>
      typeof part === 'string' ? part : part.type === 'text' ? String(part.text) : '',
    )
    .join('');
}

/**
 * PostgreSQL's text columns cannot hold U+0000, which a model or a tool may well produce. The
 * projection stores it as U+FFFD on every backend, so all of them list the same text; the
 * checkpoint itself (bytes) keeps the exact content the model sees on the next turn.
 */
function storable(text: string): string {
  return text.includes('\u0000') ? text.replaceAll('\u0000', '\uFFFD') : text;
}

function storableOrNull(text: string | undefined): string | null {
  return text === undefined ? null : storable(text);
}

function toolCallsOf(message: BaseMessage): ToolCall[] {
  const calls = (
    message as { tool_calls?: { id?: string; name: string; args: Record<string, unknown> }[] }
  ).tool_calls;
  return (calls ?? []).map((call, index) => ({
    id: call.id ?? `call_${index}`,
    name: call.name,
    args: call.args,
  }));
}

function roleOf(message: BaseMessage): MessageRole {
  return ROLE_BY_TYPE[message.getType()] ?? 'user';
}

/**
 * Derives the message projection of a thread from the `messages` channel of its latest
 * checkpoint. Pure and deterministic, so every backend projects identically.
 * Ids are the LangChain message ids (the fallback for an id-less message is positional).
 * An assistant or tool message without an explicit parent points at the latest user message.
 * With `from`, only `messages[from…]` are projected (at their positions in the whole list),
 * exactly as the whole list would project them: what a backend whose rows already hold the
 * projection of the first `from` messages has left to write.
 */
export function projectCheckpointMessages(
  sessionId: string,
  messages: readonly BaseMessage[],
  from = 0,
): ProjectedMessage[] {
  let lastUserId: string | null = null;
  for (let seq = from - 1; seq >= 0; seq -= 1) {
    const message = messages[seq];
    if (message && roleOf(message) === 'user') {
      lastUserId = message.id ?? `${sessionId}:${seq}`;
      break;
    }
  }
  return messages.slice(from).map((message, index) => {
    const seq = from + index;
    const role = roleOf(message);
    const id = message.id ?? `${sessionId}:${seq}`;
    const kwargs = (message.additional_kwargs?.[COGNITION_KWARGS_KEY] ??
      {}) as CognitionMessageKwargs;
    const usage = (message as { usage_metadata?: { output_tokens?: number } }).usage_metadata;
    const responseMeta = message.response_metadata as
      { model_name?: string; model?: string } | undefined;
    const parentId =
      kwargs.parentId !== undefined ? kwargs.parentId : role === 'user' ? null : lastUserId;
    if (role === 'user') lastUserId = id;
    return {
      id,
      sessionId,
      seq,
      role,
      content: storable(textOf(message.content)),
      toolCalls: role === 'assistant' ? toolCallsOf(message) : [],
      toolCallId:
        role === 'tool'
          ? storableOrNull((message as { tool_call_id?: string }).tool_call_id)
          : null,
      tokenCount: role === 'assistant' ? (usage?.output_tokens ?? null) : null,
      modelUsed:
        role === 'assistant'
          ? storableOrNull(responseMeta?.model_name ?? responseMeta?.model)
          : null,
      parentId,
      metadata: kwargs.metadata ?? {},
    };
  });
}
