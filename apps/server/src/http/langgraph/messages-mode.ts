import type { AgentEventEnvelope } from '@cognition/contracts';
import type { StreamPart } from './run-stream';

/**
 * The `messages` stream mode (partial messages), docs/langgraph-api.md "Streams", made as
 * LangGraph's server makes it (read from langgraphjs `libs/langgraph-api/src/stream.mts`): the
 * first chunk of a model message is announced by `messages/metadata` (`{[id]: {metadata}}`), and
 * every chunk sends `messages/partial` with the message so far (`[message]`); each state
 * (`values`) of the root graph sends `messages/complete` with its messages not sent complete
 * before (the first one: the thread's whole history, as LangGraph does).
 *
 * It is made from the run's stored events — a graph run's `messages` and `values` chunks, an
 * agent run's tokens —, so a rejoin or a replay after a restart sends the same parts: one
 * instance follows one stream from the run's first event (what was sent before the client's
 * `Last-Event-ID` is folded in, not sent again).
 */
export class PartialMessages {
  private readonly partial = new Map<string, Record<string, unknown>>();
  private readonly completed = new Set<string>();

  /** The `messages/*` parts of one stored event. */
  partsOf(envelope: AgentEventEnvelope): StreamPart[] {
    const { event, id, runId } = envelope;
    if (event.type === 'token') {
      const chunk = { type: 'AIMessageChunk', content: event.content, id: `run-${runId}` };
      return this.chunk(id, chunk, { run_id: runId, langgraph_node: 'agent' });
    }
    if (event.type !== 'graph') return [];
    if (event.mode === 'messages' && Array.isArray(event.data)) {
      const [chunk, metadata] = event.data as [unknown, unknown];
      if (!isObject(chunk) || typeof chunk['id'] !== 'string') return [];
      return this.chunk(id, chunk, metadata);
    }
    // The root graph's states only (a subgraph's are its own), as LangGraph's server does.
    if (event.mode === 'values' && event.namespace.length === 0 && isObject(event.data)) {
      return this.complete(event.data, id);
    }
    return [];
  }

  /** `messages/complete` of the state's messages not sent complete yet. */
  complete(values: Record<string, unknown>, id?: string): StreamPart[] {
    const messages = Array.isArray(values['messages']) ? (values['messages'] as unknown[]) : [];
    const fresh = messages.filter(
      (m): m is Record<string, unknown> =>
        isObject(m) && typeof m['id'] === 'string' && !this.completed.has(m['id']),
    );
    for (const m of fresh) this.completed.add(m['id'] as string);
    if (fresh.length === 0) return [];
    return [{ event: 'messages/complete', data: fresh, ...(id !== undefined ? { id } : {}) }];
  }

  private chunk(id: string, chunk: Record<string, unknown>, metadata: unknown): StreamPart[] {
    const messageId = chunk['id'] as string;
    const before = this.partial.get(messageId);
    const merged = before ? concat(before, chunk) : chunk;
    this.partial.set(messageId, merged);
    const parts: StreamPart[] = [];
    if (!before) {
      parts.push({ id, event: 'messages/metadata', data: { [messageId]: { metadata } } });
    }
    parts.push({ id, event: 'messages/partial', data: [merged] });
    return parts;
  }
}

/** Two chunks of one message as one (LangChain's `concat`: texts and lists appended). */
function concat(a: Record<string, unknown>, b: Record<string, unknown>): Record<string, unknown> {
  const out: Record<string, unknown> = { ...a, ...b };
  for (const key of ['content', 'tool_call_chunks', 'tool_calls', 'invalid_tool_calls']) {
    const x = a[key];
    const y = b[key];
    if (typeof x === 'string' && typeof y === 'string') out[key] = x + y;
    else if (Array.isArray(x) && Array.isArray(y))
      out[key] = [...(x as unknown[]), ...(y as unknown[])];
    else if (y === undefined || y === '' || (Array.isArray(y) && y.length === 0)) out[key] = x;
  }
  return out;
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
