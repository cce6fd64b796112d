import type { BaseMessage } from '@langchain/core/messages';
import { forkMessages, MESSAGES_CHANNEL } from '@cognition/storage';
import type { ClearedMark, ContextState } from '../graph/agent-state';
import { AGENT_STATE_CHANNELS } from '../graph/agent-state';
import { newMessageId } from '../ids';

/*
 * How session actions rewrite an agent thread's state (the channels of AgentStateAnnotation)
 * when they copy a checkpoint: the copy's values go through one of these transforms.
 */

/**
 * `clear`: the state keeps every message (history stays readable) and gains a clear mark after
 * the last one, so the next model call starts from an empty conversation; the summary and the
 * compacted range are dropped with it.
 */
export function clearValues(values: Record<string, unknown>): Record<string, unknown> {
  const messages = (values[MESSAGES_CHANNEL] as BaseMessage[] | undefined) ?? [];
  const mark: ClearedMark = {
    message_count: messages.length,
    last_message_id: messages[messages.length - 1]?.id ?? null,
  };
  return { ...values, [AGENT_STATE_CHANNELS.cleared]: mark, [AGENT_STATE_CHANNELS.context]: null };
}

/**
 * `fork` (and each checkpoint of a copy, with one `newId` that answers the same new id for the
 * same old one): every message gets a new id (parent links, the compacted range and the clear mark are
 * remapped to them); the event mark (an event id of the source session) is dropped.
 */
export function forkValues(
  values: Record<string, unknown>,
  newId: (oldId: string | undefined) => string = () => newMessageId(),
): Record<string, unknown> {
  const { values: copied, ids } = forkMessages(values, newId);
  const remap = (id: string): string => ids.get(id) ?? id;
  const context = copied[AGENT_STATE_CHANNELS.context] as ContextState | null | undefined;
  const cleared = copied[AGENT_STATE_CHANNELS.cleared] as ClearedMark | null | undefined;
  const next: Record<string, unknown> = { ...copied, [AGENT_STATE_CHANNELS.eventMark]: null };
  if (context?.compacted) {
    next[AGENT_STATE_CHANNELS.context] = {
      ...context,
      compacted: {
        ...context.compacted,
        first_message_id: remap(context.compacted.first_message_id),
        last_message_id: remap(context.compacted.last_message_id),
      },
    };
  }
  if (cleared) {
    next[AGENT_STATE_CHANNELS.cleared] = {
      ...cleared,
      last_message_id: cleared.last_message_id === null ? null : remap(cleared.last_message_id),
    };
  }
  return next;
}
