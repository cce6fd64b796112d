import { once } from 'node:events';
import type { AgentEvent, AgentEventEnvelope } from '@cognition/contracts';
import { eventData, jsonOf } from '@cognition/contracts';
import type { Response } from 'express';

/**
 * Our run events as LangGraph stream parts (docs/langgraph-api.md, "Streams"). An agent run's
 * tokens are `messages` parts (the `messages-tuple` mode: `[chunk, metadata]`), its tool calls,
 * results and our other events `custom` parts, a pause for a decision an `updates` part with
 * `__interrupt__`, a failure an `error` part; the thread's values follow at the end (`values`).
 * A `langgraph.json` graph's run streams its own chunks (`graph` events), passed through as the
 * parts of their mode. Every part made from a stored event carries that event's id, so
 * `Last-Event-ID` resumes.
 */

export const STREAM_MODES = [
  'values',
  'updates',
  'messages',
  'messages-tuple',
  'custom',
  'events',
  'debug',
  'tasks',
  'checkpoints',
] as const;
export type StreamMode = (typeof STREAM_MODES)[number];

/** The modes this slice produces parts for; the others are accepted and yield nothing yet. */
export interface StreamPart {
  event: string;
  data: unknown;
  id?: string;
}

/** The parts of one stored event under the requested modes. */
export function partsOf(envelope: AgentEventEnvelope, modes: ReadonlySet<string>): StreamPart[] {
  const { event, id, runId } = envelope;
  switch (event.type) {
    case 'token':
      if (!modes.has('messages-tuple')) return [];
      return [
        {
          id,
          event: 'messages',
          data: [
            { type: 'AIMessageChunk', content: event.content, id: `run-${runId}`, tool_calls: [] },
            { run_id: runId, langgraph_node: 'agent' },
          ],
        },
      ];
    case 'interrupt':
      if (!modes.has('updates') && !modes.has('values')) return [];
      return [
        {
          id,
          event: modes.has('updates') ? 'updates' : 'values',
          data: { __interrupt__: [{ value: eventData(event), id: runId }] },
        },
      ];
    case 'graph': {
      // A langgraph.json graph's chunk, as the graph streamed it; its `messages` mode is the
      // SDK's `messages-tuple`. A subgraph's parts are named `mode|namespace…`.
      const requested = event.mode === 'messages' ? 'messages-tuple' : event.mode;
      if (!modes.has(requested)) return [];
      return [{ id, event: [event.mode, ...event.namespace].join('|'), data: event.data }];
    }
    case 'error':
      return [{ id, event: 'error', data: errorPart(event) }];
    case 'done':
    case 'reconnected':
    case 'status':
      return [];
    // Our own events (tools, plan, delegation, artifacts, usage...): custom parts.
    case 'tool_call':
    case 'tool_result':
    case 'planning':
    case 'step_complete':
    case 'delegation':
    case 'artifact':
    case 'usage':
    case 'compaction':
    case 'queued':
    case 'resumed':
      return modes.has('custom')
        ? [{ id, event: 'custom', data: { type: event.type, ...eventData(event) } }]
        : [];
  }
}

/**
 * The data of a failed run's `error` part (and of `__error__` in a wait's answer): the
 * exception a graph threw, by its name, as LangGraph's server sends it
 * (`{"error": "CustomError", "message": "Boo!"}`); for any other failure our error code and
 * message.
 */
export function errorPart(event: Extract<AgentEvent, { type: 'error' }>): {
  error: string;
  message: string;
} {
  return event.exception
    ? { error: event.exception.name, message: event.exception.message }
    : { error: event.code, message: event.message };
}

/** Opens an SSE response the SDK accepts: no `retry:` line (the SDK would yield it as a part). */
export function openStream(res: Response, headers: Record<string, string>): void {
  res.status(200);
  res.setHeader('Content-Type', 'text/event-stream');
  res.setHeader('Cache-Control', 'no-cache');
  res.setHeader('X-Accel-Buffering', 'no');
  for (const [name, value] of Object.entries(headers)) res.setHeader(name, value);
  res.flushHeaders();
}

/** Writes one part, waiting for the socket to drain when the client is slow. */
export async function writePart(res: Response, part: StreamPart): Promise<void> {
  if (res.destroyed) return;
  const frame =
    `event: ${part.event}\n` +
    `data: ${jsonOf(part.data)}\n` +
    (part.id !== undefined ? `id: ${part.id}\n` : '') +
    '\n';
  if (!res.write(frame)) await Promise.race([once(res, 'drain'), once(res, 'close')]);
}
