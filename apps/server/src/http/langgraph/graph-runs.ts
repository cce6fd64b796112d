import type { GraphRunKwargs, Run } from '@cognition/contracts';
import { GraphCommandGotoSchema } from '@cognition/contracts';
import { z } from 'zod';
import { LangGraphHttpError, parsePart, withoutCommandMarkers } from './wire';

/**
 * A run of a `langgraph.json` graph's assistant (docs/langgraph-api.md): the body's kwargs,
 * stored with the run, which the executor streams through the graph on the session's thread.
 */

/**
 * The commands a graph run takes: `resume` (the value `interrupt()` returns), `update` and
 * `goto` (node names or `Send`s), as the SDK sends them or as LangGraph's `Command.toJSON()`
 * (`RemoteGraph`) does.
 */
const GraphCommandSchema = z.preprocess(
  withoutCommandMarkers,
  z
    .object({
      resume: z.unknown().optional(),
      update: z.unknown().optional(),
      goto: GraphCommandGotoSchema.optional(),
    })
    .strict(),
);

/** The fields of a run's create body (runs.ts checked them) a graph run is made with. */
export interface GraphRunBody {
  input?: Record<string, unknown> | null;
  command?: Record<string, unknown> | null;
  config?: Record<string, unknown>;
  context?: Record<string, unknown>;
  stream_mode?: string | string[];
  stream_subgraphs?: boolean;
  interrupt_before?: '*' | string[];
  interrupt_after?: '*' | string[];
  metadata?: Record<string, unknown>;
}

/** What a stored assistant sets for its runs (a system assistant's are empty). */
export interface AssistantDefaults {
  assistant_id: string;
  config: Record<string, unknown>;
  context: Record<string, unknown>;
}

/**
 * The run's config over the assistant's, as LangGraph merges them: top-level keys of the run
 * win, and `configurable` is merged key by key.
 */
function mergedConfig(
  base: Record<string, unknown>,
  run: Record<string, unknown>,
): Record<string, unknown> {
  const configurable = (value: unknown) =>
    value !== null && typeof value === 'object' ? (value as Record<string, unknown>) : {};
  const merged = { ...base, ...run };
  if (base['configurable'] !== undefined || run['configurable'] !== undefined) {
    merged['configurable'] = {
      ...configurable(base['configurable']),
      ...configurable(run['configurable']),
    };
  }
  return merged;
}

/**
 * The kwargs of a graph run made with `body` on an assistant (its config and context under the
 * run's); a 422 naming the field it cannot take.
 */
export function graphKwargs(
  graph: { graphId: string; nodes: readonly string[] },
  body: GraphRunBody,
  assistant: AssistantDefaults,
  checkpointId?: string,
): GraphRunKwargs {
  const graphId = graph.graphId;
  const interruptBefore = interruptNodes(graph, body.interrupt_before, 'interrupt_before');
  const interruptAfter = interruptNodes(graph, body.interrupt_after, 'interrupt_after');
  const command =
    body.command == null
      ? null
      : parsePart(z.object({ command: GraphCommandSchema }), { command: body.command }, 'body')
          .command;
  const modes = body.stream_mode ?? ['values'];
  return {
    graph_id: graphId,
    assistant_id: assistant.assistant_id,
    input: body.input ?? null,
    command,
    config: mergedConfig(assistant.config, body.config ?? {}),
    context: { ...assistant.context, ...body.context },
    stream_mode: Array.isArray(modes) ? modes : [modes],
    stream_subgraphs: body.stream_subgraphs === true,
    ...(interruptBefore !== undefined ? { interrupt_before: interruptBefore } : {}),
    ...(interruptAfter !== undefined ? { interrupt_after: interruptAfter } : {}),
    ...(checkpointId !== undefined ? { checkpoint_id: checkpointId } : {}),
    ...(body.metadata !== undefined ? { metadata: body.metadata } : {}),
  };
}

/**
 * `interrupt_before` / `interrupt_after`: `"*"` or nodes of the graph (LangGraph would ignore
 * a name it does not have; here it is a 422 naming the entry, `body.interrupt_before.0`).
 */
function interruptNodes(
  graph: { graphId: string; nodes: readonly string[] },
  nodes: '*' | string[] | undefined,
  field: 'interrupt_before' | 'interrupt_after',
): '*' | string[] | undefined {
  if (nodes === undefined || nodes === '*') return nodes;
  const errors = nodes.flatMap((node, index) =>
    graph.nodes.includes(node)
      ? []
      : [
          {
            path: `body.${field}.${index}`,
            message: `graph "${graph.graphId}" has no node "${node}" (its nodes: ${graph.nodes.join(', ')})`,
          },
        ],
  );
  if (errors.length > 0) {
    const detail = errors.map((e) => `${e.path}: ${e.message}`).join('; ');
    throw new LangGraphHttpError(422, `Invalid body: ${detail}`, errors);
  }
  return nodes;
}

/** The nodes of a graph as loaded (LangGraph's own `__start__` left out). */
export function graphNodes(graph: { loaded: { nodes?: Record<string, unknown> } }): string[] {
  return Object.keys(graph.loaded.nodes ?? {}).filter((name) => name !== '__start__');
}

/**
 * A thread runs one assistant's graph (its checkpoint thread holds that graph's state): a
 * thread whose runs were another graph's, or an agent's, refuses it with a 422.
 */
export function refuseOtherRuns(threadId: string, graphId: string, runs: readonly Run[]): void {
  const other = runs.find((run) => run.kwargs?.graph_id !== graphId);
  if (!other) return;
  const ran = other.kwargs ? `graph "${other.kwargs.graph_id}"` : 'an agent';
  const message = `thread ${threadId} runs ${ran}, not graph "${graphId}"`;
  throw new LangGraphHttpError(422, `Invalid body: body.assistant_id: ${message}`, [
    { path: 'body.assistant_id', message },
  ]);
}

/**
 * The `events` mode is LangChain's callback events of a graph run (`streamEvents` v2); an agent
 * run records our own events (tokens, tool calls), not LangChain's, and does not make them up:
 * a 422 naming the entry (`body.stream_mode.0`).
 */
export function refuseEventsForAgents(modes: readonly string[] | undefined): void {
  const index = modes?.indexOf('events') ?? -1;
  if (index < 0) return;
  const message =
    'an agent assistant streams our events (messages-tuple, messages, custom, values, updates), not LangChain callback events';
  throw new LangGraphHttpError(422, `Invalid body: body.stream_mode.${index}: ${message}`, [
    { path: `body.stream_mode.${index}`, message },
  ]);
}
