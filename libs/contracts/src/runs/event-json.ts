import type { AgentEvent } from './events';

/**
 * A stored event's JSON text, made once per event on the hot path of a streamed graph run: the
 * event log stores each `graph` event as text (`eventJson`) and the LangGraph API then sends
 * the same chunk's data as an SSE part (`jsonOf`). The data's text made for the first is kept
 * (by the data object, which nothing changes once emitted) and written into the second, so a
 * token's chunk (the message chunk and LangGraph's metadata) is serialized once, not twice.
 */
const dataTexts = new WeakMap<object, string>();

const GRAPH_KEYS = ['type', 'mode', 'namespace', 'data'] as const;

/** `JSON.stringify(event)`, the same text; a `graph` event's data text is kept for `jsonOf`. */
export function eventJson(event: AgentEvent): string {
  if (event.type !== 'graph' || event.data === null || typeof event.data !== 'object') {
    return JSON.stringify(event);
  }
  // The text below is JSON.stringify's only when the event has these keys in this order.
  const keys = Object.keys(event);
  if (keys.length !== GRAPH_KEYS.length || keys.some((key, i) => key !== GRAPH_KEYS[i])) {
    return JSON.stringify(event);
  }
  const data = JSON.stringify(event.data);
  dataTexts.set(event.data, data);
  return `{"type":"graph","mode":${JSON.stringify(event.mode)},"namespace":${JSON.stringify(event.namespace)},"data":${data}}`;
}

/** `JSON.stringify(value)`, reusing the text `eventJson` made when `value` is a graph event's data. */
export function jsonOf(value: unknown): string | undefined {
  if (value !== null && typeof value === 'object') {
    const text = dataTexts.get(value);
    if (text !== undefined) return text;
  }
  return JSON.stringify(value);
}
