import type { BaseMessage } from '@langchain/core/messages';
import { MESSAGES_CHANNEL } from '@cognition/storage';
import type { ClearedMark } from '../graph/agent-state';
import { AGENT_STATE_CHANNELS } from '../graph/agent-state';

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
 * `fork` (and each checkpoint of a copy): the state as it is, message ids included (they are
 * unique per session, so the fork's rows may hold the source's; parent links, the compacted
 * range and the clear mark stay valid), but the event mark (an event id of the source session)
 * is dropped.
 */
export function forkValues(values: Record<string, unknown>): Record<string, unknown> {
  return { ...values, [AGENT_STATE_CHANNELS.eventMark]: null };
}
