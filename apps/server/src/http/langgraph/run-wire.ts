import type { Run } from '@cognition/contracts';
import { z } from 'zod';
import { STREAM_MODES } from './run-stream';
import { JsonObject, LangGraphHttpError } from './wire';

/**
 * A LangGraph run on the wire (docs/langgraph-api.md): the bodies and queries the run routes
 * take and the checks of a create body no schema expresses, and a run as the SDK reads it.
 * What a run does is runs.ts's.
 */

const StreamMode = z.enum(STREAM_MODES);
const NodeList = z.union([z.literal('*'), z.array(z.string())]);

export const RunCreateSchema = z
  .object({
    assistant_id: z.string().min(1),
    input: JsonObject.nullable().optional(),
    command: JsonObject.nullable().optional(),
    metadata: JsonObject.optional(),
    config: JsonObject.optional(),
    context: JsonObject.optional(),
    // One mode or a list, read as a list, so a bad entry is named by its index
    // (`body.stream_mode.1`) rather than the union failing as a whole.
    stream_mode: z
      .preprocess((value) => (typeof value === 'string' ? [value] : value), z.array(StreamMode))
      .optional(),
    stream_subgraphs: z.boolean().optional(),
    stream_resumable: z.boolean().optional(),
    multitask_strategy: z.enum(['reject', 'enqueue', 'interrupt', 'rollback']).optional(),
    on_disconnect: z.enum(['cancel', 'continue']).optional(),
    on_completion: z.enum(['delete', 'keep']).optional(),
    interrupt_before: NodeList.optional(),
    interrupt_after: NodeList.optional(),
    webhook: z.url().optional(),
    checkpoint: JsonObject.optional(),
    checkpoint_id: z.string().optional(),
    checkpoint_during: z.boolean().optional(),
    durability: z.enum(['sync', 'async', 'exit']).optional(),
    // A delayed run: `pending` until then (graph runs; refused for an agent's, runs.ts).
    after_seconds: z.number().min(0).max(31_536_000).optional(),
    if_not_exists: z.enum(['create', 'reject']).optional(),
    feedback_keys: z.union([z.string(), z.array(z.string())]).optional(),
    langsmith_tracer: JsonObject.optional(),
  })
  .strict();
export type RunCreate = z.output<typeof RunCreateSchema>;

/** What an agent assistant's run cannot take (its pauses are its tools' decisions). */
export const NOT_FOR_AGENTS: (keyof RunCreate)[] = ['interrupt_before', 'interrupt_after'];

export function refuse(
  fields: readonly (keyof RunCreate)[],
  body: RunCreate,
  message: string,
): void {
  for (const field of fields) {
    if (body[field] !== undefined && body[field] !== null && body[field] !== 0) {
      throw new LangGraphHttpError(422, `Invalid body: body.${field}: ${message}`, [
        { path: `body.${field}`, message },
      ]);
    }
  }
}

/**
 * The checkpoint a run starts from (time travel): `checkpoint_id`, or `checkpoint` (its
 * `checkpoint_id`; only the root namespace). Undefined: the thread's head.
 */
export function startCheckpoint(body: RunCreate): string | undefined {
  const ns = body.checkpoint?.['checkpoint_ns'];
  if (ns !== undefined && ns !== '') {
    const message = 'only the root namespace ("") is served';
    throw new LangGraphHttpError(422, `Invalid body: body.checkpoint.checkpoint_ns: ${message}`, [
      { path: 'body.checkpoint.checkpoint_ns', message },
    ]);
  }
  const inside = body.checkpoint?.['checkpoint_id'];
  if (inside !== undefined && (typeof inside !== 'string' || inside === '')) {
    const message = 'expected a checkpoint id';
    throw new LangGraphHttpError(422, `Invalid body: body.checkpoint.checkpoint_id: ${message}`, [
      { path: 'body.checkpoint.checkpoint_id', message },
    ]);
  }
  return body.checkpoint_id ?? inside;
}

export const RunListQuerySchema = z
  .object({
    limit: z.coerce.number().int().min(1).max(1000).default(10),
    offset: z.coerce.number().int().min(0).default(0),
    status: z.enum(['pending', 'running', 'error', 'success', 'timeout', 'interrupted']).optional(),
    select: z.union([z.string(), z.array(z.string())]).optional(),
  })
  .strict();

export const CancelQuerySchema = z
  .object({
    wait: z.enum(['0', '1', 'true', 'false']).default('0'),
    action: z.enum(['interrupt', 'rollback']).default('interrupt'),
  })
  .strict();

export type LangGraphRunStatus =
  'pending' | 'running' | 'error' | 'success' | 'timeout' | 'interrupted';

export function runStatus(status: Run['status']): LangGraphRunStatus {
  switch (status) {
    case 'pending':
    case 'queued':
      return 'pending';
    case 'running':
      return 'running';
    case 'completed':
      return 'success';
    case 'failed':
      return 'error';
    // Cancelled, interrupted by a crash, or paused for a person's decision.
    case 'aborted':
    case 'interrupted':
    case 'requires_action':
      return 'interrupted';
  }
}

export function runView(
  run: Run,
  assistantId: string | null,
  metadata: Record<string, unknown> = {},
): Record<string, unknown> {
  return {
    run_id: run.id,
    thread_id: run.sessionId,
    // A graph run keeps its assistant with its kwargs; an agent run's is known at creation only.
    assistant_id: run.kwargs?.assistant_id ?? assistantId,
    status: runStatus(run.status),
    created_at: run.createdAt.toISOString(),
    updated_at: run.updatedAt.toISOString(),
    metadata,
    multitask_strategy: run.multitaskStrategy ?? 'reject',
    kwargs: run.kwargs ?? {},
  };
}

/** The text of the last human message of `input.messages`, which an agent run answers. */
export function humanText(input: Record<string, unknown> | null | undefined): string {
  const messages = input?.['messages'];
  const list = Array.isArray(messages) ? (messages as unknown[]) : [];
  for (let i = list.length - 1; i >= 0; i -= 1) {
    const m = list[i] as { type?: unknown; role?: unknown; content?: unknown } | null;
    if (!m || (m.type !== 'human' && m.role !== 'user' && m.role !== 'human')) continue;
    if (typeof m.content === 'string' && m.content !== '') return m.content;
    if (Array.isArray(m.content)) {
      const text = (m.content as { type?: unknown; text?: unknown }[])
        .map((part) => (part.type === 'text' && typeof part.text === 'string' ? part.text : ''))
        .join('');
      if (text !== '') return text;
    }
  }
  throw new LangGraphHttpError(
    422,
    'Invalid body: body.input.messages: an agent assistant answers a human message: send input.messages ending with {"type": "human", "content": "..."}',
    [{ path: 'body.input.messages', message: 'expected a human message with text content' }],
  );
}
