import type { AgentEventType } from '@cognition/contracts';
import { AgentEventEnvelopeSchema, AgentEventSchema, EventIdSchema } from '@cognition/contracts';
import { z } from 'zod';

/*
 * The SSE frames of the REST event streams, as `formatSseFrame` (libs/runtime/src/events/sse.ts)
 * writes them: `id:` the event id, `event:` the event type, `data:` the event's fields without
 * its `type` (`eventData`) and with `at` as one JSON line. Generated from the contracts' event schemas, so a new
 * event type is documented by adding it there. Each frame is one object `{id, event, data}`,
 * discriminated by `event`: what an SSE parser of a generated client yields per frame.
 */

/** `tool_call` -> `ToolCall` (component names). */
function pascal(type: string): string {
  return type
    .split('_')
    .map((part) => part.charAt(0).toUpperCase() + part.slice(1))
    .join('');
}

/** `at`, which `formatSseFrame` adds to every frame's data. */
const EventTimeSchema = AgentEventEnvelopeSchema.shape.at.meta({
  description:
    'When the event was emitted (ISO 8601, UTC, milliseconds), stored with it: a replay carries ' +
    'the time of the original event, so a past run can be laid out in time',
});

/** One line per event for generated clients; the full contract is docs/streaming.md. */
const DESCRIPTIONS: Record<AgentEventType, string> = {
  queued: 'First event of a run that waits behind `ahead` runs of its session (double-texting)',
  status: '`thinking` when the run starts, `idle` right before its terminal event',
  token: 'A piece of assistant text, in order (several tokens may arrive merged in one)',
  tool_call: 'The model asked for a tool; a `tool_result` with `tool_call_id` = `id` follows',
  tool_result: 'What the tool returned (`exit_code` 0 = success)',
  planning: "The agent's whole plan (replaces the previous one)",
  step_complete: 'A plan item became `completed`',
  delegation: 'The agent handed a task to a subagent',
  artifact: 'An artifact tool listed, read or wrote an artifact',
  usage: 'Token totals of the run; `estimated_cost` null when the price is unknown',
  compaction: "The next model call's context was compacted",
  error: 'Terminal, failure (`ABORTED` after an abort)',
  done: 'Terminal, success: the final assistant message',
  reconnected: 'First event of a resumed stream; `truncated` when events were evicted',
  resumed:
    'A new server process took the run up again; events after `void_after_event_id` are void',
  interrupt: 'The run paused for a human decision on tool calls; ends the stream without `done`',
  graph: 'A chunk of a langgraph.json graph run (`mode`, subgraph `namespace`, `data`)',
};

const ID_DESCRIPTIONS: Partial<Record<AgentEventType, string>> = {
  queued: '`<runId>:000000000`: sorts before the run’s own events; not stored in the event log',
  reconnected: 'The `Last-Event-ID` the client resumed from (so "last id seen" stays correct)',
};

function frameSchema(option: (typeof AgentEventSchema.options)[number]) {
  const type: AgentEventType = option.shape.type.value;
  const name = pascal(type);
  // The event's fields without `type`, as `eventData` writes them (same strip mode as the contract).
  const { type: _type, ...fields } = option.shape as z.ZodRawShape;
  const data = z.object({ ...fields, at: EventTimeSchema }).meta({
    id: `${name}EventData`,
    description: `The \`data:\` line of an \`event: ${type}\` frame (JSON).`,
  });
  return z
    .object({
      id: EventIdSchema.meta({
        description:
          ID_DESCRIPTIONS[type] ??
          'The `id:` line, `<runId>:<seq>`: send it back as `Last-Event-ID` to resume after it',
      }),
      event: z.literal(type).meta({ description: 'The `event:` line' }),
      data,
    })
    .meta({ id: `${name}Event`, description: DESCRIPTIONS[type] });
}

const frames = AgentEventSchema.options.map(frameSchema);

/**
 * One frame of a `text/event-stream` answer. The stream itself is text: a `retry: <ms>` line
 * first, then these frames (`id:`, `event:`, `data:` lines and a blank line) and `: ping`
 * comments as heartbeats (docs/streaming.md).
 */
export const AgentEventFrame = z
  .discriminatedUnion('event', frames as [(typeof frames)[number], ...typeof frames])
  .meta({
    id: 'AgentEvent',
    description:
      'One Server-Sent Events frame, discriminated by `event`. The response body is text: a ' +
      '`retry: <ms>` line, then one frame per agent event — `id: <id>`, `event: <event>`, ' +
      '`data: <data as one JSON line>`, a blank line — and `: ping` comments as heartbeats; it ' +
      "ends after the run's terminal `done` or `error` event (or an `interrupt`). " +
      'See docs/streaming.md.',
  });
