import { z } from 'zod';
import { PendingDecisionTypeSchema, PendingToolCallSchema } from '../agents/agent';
import { IdSchema, StringMapSchema } from '../common';
import { ErrorCodeSchema } from '../errors';
import type { Message } from '../sessions/message';
import { MessageRoleSchema, ToolCallSchema } from '../sessions/message';

/*
 * Agent events: what a run streams to its subscribers (tRPC subscription, REST SSE).
 * Field names are snake_case because event payloads go verbatim into SSE `data:` lines, where
 * clients of the original Cognition API expect them.
 */

/** A message as carried inside events (snake_case, ISO timestamp: JSON-safe on every wire). */
export const WireMessageSchema = z.object({
  id: IdSchema,
  session_id: IdSchema,
  role: MessageRoleSchema,
  content: z.string(),
  tool_calls: z.array(ToolCallSchema),
  tool_call_id: z.string().nullable(),
  token_count: z.number().int().min(0).nullable(),
  model_used: z.string().nullable(),
  parent_id: IdSchema.nullable(),
  metadata: StringMapSchema,
  created_at: z.string(),
});
export type WireMessage = z.infer<typeof WireMessageSchema>;

export function toWireMessage(message: Message): WireMessage {
  return {
    id: message.id,
    session_id: message.sessionId,
    role: message.role,
    content: message.content,
    tool_calls: message.toolCalls,
    tool_call_id: message.toolCallId,
    token_count: message.tokenCount,
    model_used: message.modelUsed,
    parent_id: message.parentId,
    metadata: message.metadata,
    created_at: message.createdAt.toISOString(),
  };
}

export const TodoStatusSchema = z.enum(['pending', 'in_progress', 'completed']);
export const TodoSchema = z.object({ content: z.string().min(1), status: TodoStatusSchema });
export type Todo = z.infer<typeof TodoSchema>;

/** A chunk of assistant text as the model produced it. */
export const TokenEventSchema = z.object({ type: z.literal('token'), content: z.string() });
/** The model asked for a tool; always followed by the `tool_result` with the same id. */
export const ToolCallEventSchema = z.object({
  type: z.literal('tool_call'),
  id: z.string(),
  name: z.string(),
  args: z.record(z.string(), z.unknown()),
});
/** `exit_code` 0 means success; tool failures are results too (the model sees them). */
export const ToolResultEventSchema = z.object({
  type: z.literal('tool_result'),
  tool_call_id: z.string(),
  output: z.string(),
  exit_code: z.number().int(),
});
/** The agent's current plan (the whole list, replacing the previous one). */
export const PlanningEventSchema = z.object({
  type: z.literal('planning'),
  todos: z.array(TodoSchema),
});
/** A plan item became `completed`; `step_number` is 1-based within `total_steps`. */
export const StepCompleteEventSchema = z.object({
  type: z.literal('step_complete'),
  step_number: z.number().int().min(1),
  total_steps: z.number().int().min(1),
  description: z.string(),
});
/** The agent handed a task to a subagent. */
export const DelegationEventSchema = z.object({
  type: z.literal('delegation'),
  target_agent: z.string(),
  task: z.string(),
});
/**
 * The agent's artifact tools touched an artifact (`artifact_list`: `listed`, `artifact_read`:
 * `read`, `artifact_write`: `created` or `updated`). `artifact_type` is the artifact's type
 * (`type` is the event's own discriminator); `version` is the version listed, read or written.
 */
export const ArtifactEventSchema = z.object({
  type: z.literal('artifact'),
  id: IdSchema,
  name: z.string(),
  artifact_type: z.string(),
  version: z.number().int().min(1),
  action: z.enum(['listed', 'read', 'created', 'updated']),
});
export const AgentStatusSchema = z.enum(['thinking', 'idle']);
export const StatusEventSchema = z.object({ type: z.literal('status'), status: AgentStatusSchema });
/**
 * Token accounting of the run so far. `estimated_cost` is null when the model's price is unknown
 * (never a misleading zero); `estimated` is true when the provider reported no usage and the
 * token figures are estimates.
 */
export const UsageEventSchema = z.object({
  type: z.literal('usage'),
  input_tokens: z.number().int().min(0),
  output_tokens: z.number().int().min(0),
  estimated_cost: z.number().min(0).nullable(),
  provider: z.string(),
  model: z.string(),
  estimated: z.boolean(),
});
/**
 * The context of the next model call was compacted before it was sent: the oldest
 * `summarized_messages` messages of the window left it (folded into the summary by `model` for
 * strategy `summarize`; dropped for `sliding_window`, `model` null). Token figures count the
 * whole call input before and after. The thread itself keeps every message.
 */
export const CompactionEventSchema = z.object({
  type: z.literal('compaction'),
  strategy: z.enum(['summarize', 'sliding_window']),
  before_tokens: z.number().int().min(0),
  after_tokens: z.number().int().min(0),
  summarized_messages: z.number().int().min(1),
  model: z.string().nullable(),
});
/** Terminal: the run failed (or was aborted: code `ABORTED`). */
export const ErrorEventSchema = z.object({
  type: z.literal('error'),
  message: z.string(),
  code: ErrorCodeSchema,
  /**
   * The exception a `langgraph.json` graph threw (its `name` and own `message`), which the
   * LangGraph API sends as its `error` part (`{"error": name, "message"}`); absent otherwise.
   */
  exception: z.object({ name: z.string(), message: z.string() }).optional(),
});
/** Terminal: the run succeeded; carries the final assistant message as projected. */
export const DoneEventSchema = z.object({
  type: z.literal('done'),
  assistant_data: WireMessageSchema.nullable(),
});
/**
 * Sent first to a subscriber that resumed after `last_event_id`. `truncated` is true when events
 * after that id were already evicted from the buffer (the replay that follows is then partial).
 */
export const ReconnectedEventSchema = z.object({
  type: z.literal('reconnected'),
  last_event_id: z.string(),
  truncated: z.boolean(),
});

/**
 * The run was taken up again by a new server process after the previous one died mid-run (same
 * run id, ids continue). Whatever this run streamed after `void_after_event_id` belongs to the
 * step that was cut off: it is void and is produced again after this event. `attempt` counts
 * the resumptions of the run (1 for the first).
 */
export const ResumedEventSchema = z.object({
  type: z.literal('resumed'),
  run_id: z.string(),
  void_after_event_id: z.string(),
  attempt: z.number().int().positive(),
});

/**
 * First event of a run sent with `multitask_strategy` `enqueue`, `interrupt` or `rollback`
 * while another run was active: the run waits (status `pending`) behind `ahead` runs of its
 * session (the active one included) and starts, with its own events, when they are done.
 */
export const QueuedEventSchema = z.object({
  type: z.literal('queued'),
  run_id: z.string(),
  ahead: z.number().int().min(0),
});

/**
 * The run paused before running tool calls its agent lists in `interrupt_on` (human in the
 * loop): its status is `requires_action` and this event ends the stream (no `done`). The run
 * goes on, with the same id and the next event ids, once `POST
 * /sessions/{id}/runs/{run_id}/resume` (tRPC `runs.resume`) gives one decision per call; a
 * client re-attaches after this event's id. `allowed` maps each call id to its decisions.
 */
export const InterruptEventSchema = z.object({
  type: z.literal('interrupt'),
  run_id: z.string(),
  tool_calls: z.array(PendingToolCallSchema),
  allowed: z.record(z.string(), z.array(PendingDecisionTypeSchema)),
});

/**
 * One chunk of a `langgraph.json` graph's run, as the graph streamed it: its stream `mode`
 * (`values`, `updates`, `messages`, `custom`, ...), the subgraph `namespace` it came from
 * (empty: the graph itself) and its data, JSON (messages in LangChain's dict form).
 */
export const GraphEventSchema = z.object({
  type: z.literal('graph'),
  mode: z.string(),
  namespace: z.array(z.string()),
  data: z.unknown(),
});

export const AgentEventSchema = z.discriminatedUnion('type', [
  QueuedEventSchema,
  TokenEventSchema,
  ToolCallEventSchema,
  ToolResultEventSchema,
  PlanningEventSchema,
  StepCompleteEventSchema,
  DelegationEventSchema,
  ArtifactEventSchema,
  StatusEventSchema,
  UsageEventSchema,
  CompactionEventSchema,
  ErrorEventSchema,
  DoneEventSchema,
  ReconnectedEventSchema,
  ResumedEventSchema,
  InterruptEventSchema,
  GraphEventSchema,
]);
export type AgentEvent = z.infer<typeof AgentEventSchema>;
export type AgentEventType = AgentEvent['type'];
export type AgentEventOf<T extends AgentEventType> = Extract<AgentEvent, { type: T }>;

/** Every run ends with exactly one terminal event: `done` on success, `error` otherwise. */
export function isTerminalEvent(event: AgentEvent): boolean {
  return event.type === 'done' || event.type === 'error';
}

/**
 * Event ids: `<runId>:<seq>` with `seq` a zero-padded decimal of fixed width, and run ids
 * time-ordered and of fixed width, so within a session plain string comparison orders events
 * (those of a later run sort after those of an earlier one). Treat ids as opaque otherwise.
 */
export const EventIdSchema = z
  .string()
  .min(3)
  .max(160)
  .regex(/^[^:]+:\d+$/, 'event ids look like <runId>:<seq>');

/**
 * One event as stored in the event log and delivered to subscribers. `at` is when it was
 * emitted (ISO 8601, UTC, milliseconds), stored with it, so a replay of a past run can be laid
 * out in time as well as a live one.
 */
export const AgentEventEnvelopeSchema = z.object({
  id: EventIdSchema,
  sessionId: IdSchema,
  runId: IdSchema,
  at: z.iso.datetime(),
  event: AgentEventSchema,
});
export type AgentEventEnvelope = z.infer<typeof AgentEventEnvelopeSchema>;

/** The SSE `data:` payload of an event: its fields without the `type` discriminator. */
export function eventData(event: AgentEvent): Record<string, unknown> {
  const { type: _type, ...data } = event;
  return data;
}
