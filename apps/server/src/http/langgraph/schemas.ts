import type { CompiledUserGraph } from '@cognition/runtime';
import { toJsonSchema } from '@langchain/core/utils/json_schema';
import { isZodSchemaV3, isZodSchemaV4 } from '@langchain/core/utils/types';
import {
  getConfigTypeSchema,
  getInputTypeSchema,
  getOutputTypeSchema,
  getUpdateTypeSchema,
} from '@langchain/langgraph/zod/schema';
import type { AssistantTarget } from './assistants';

/**
 * The JSON Schemas of an assistant's graph (`GET /assistants/{id}/schemas`, `…/subgraphs`),
 * docs/langgraph-api.md "Schemas". A `langgraph.json` graph's are derived at run time as the
 * LangGraph.js API server derives them first: a `StateSchema`'s own JSON Schema, then zod state
 * schemas (through LangGraph's zod registry, then converted directly). That server falls back to
 * reading the graph's TypeScript types with the compiler; this one does not: a graph whose state
 * is an `Annotation` gets its channels' names with no types (`{}`: any value). Our agents answer
 * their real state, the input an agent run takes and the config it reads (none).
 */

export interface GraphSchemas {
  input: unknown;
  output: unknown;
  state: unknown;
  config: unknown;
}

/** The wire answer of `GET /assistants/{id}/schemas` (and each entry of `…/subgraphs`). */
export function schemasView(graphId: string, schemas: GraphSchemas): Record<string, unknown> {
  return {
    graph_id: graphId,
    input_schema: schemas.input,
    output_schema: schemas.output,
    state_schema: schemas.state,
    config_schema: schemas.config,
    // LangGraph.js cannot tell a config schema from a context schema either: the same one.
    context_schema: schemas.config,
  };
}

export function assistantSchemas(target: AssistantTarget): GraphSchemas {
  return target.kind === 'graph' ? graphSchemas(target.graph.loaded) : AGENT_SCHEMAS;
}

/**
 * `{namespace: schemas}` of the graph's subgraphs (LangGraph's `getSubgraphsAsync`: under
 * `namespace` only, every level with `recurse`). Our agents have none.
 */
export async function subgraphSchemas(
  target: AssistantTarget,
  namespace: string | undefined,
  recurse: boolean,
): Promise<Record<string, GraphSchemas>> {
  if (target.kind !== 'graph') return {};
  const graph = target.graph.loaded as CompiledUserGraph & {
    getSubgraphsAsync?(ns?: string, recurse?: boolean): AsyncIterable<[string, unknown]>;
  };
  const found: Record<string, GraphSchemas> = {};
  if (!graph.getSubgraphsAsync) return found;
  for await (const [ns, subgraph] of graph.getSubgraphsAsync(namespace, recurse)) {
    found[ns] = graphSchemas(subgraph as CompiledUserGraph);
  }
  return found;
}

interface Builder {
  _schemaRuntimeDefinition?: unknown;
  _inputRuntimeDefinition?: unknown;
  _outputRuntimeDefinition?: unknown;
  _configRuntimeSchema?: unknown;
}

interface StateSchemaLike {
  getJsonSchema(): unknown;
  getInputJsonSchema(): unknown;
}

/** LangGraph's marker of an input that is the state's, every field optional. */
const PARTIAL_STATE = Symbol.for('langgraph.state.partial');

function isStateSchemaLike(value: unknown): value is StateSchemaLike {
  const v = value as Partial<StateSchemaLike> | null;
  return (
    typeof v === 'object' &&
    v !== null &&
    typeof v.getJsonSchema === 'function' &&
    typeof v.getInputJsonSchema === 'function'
  );
}

export function graphSchemas(graph: CompiledUserGraph): GraphSchemas {
  const builder = (graph as { builder?: Builder }).builder;
  return (
    (builder && fromStateSchema(builder)) ??
    fromZodRegistry(graph) ??
    (builder && fromZod(builder)) ??
    fromChannels(graph)
  );
}

function fromStateSchema(builder: Builder): GraphSchemas | undefined {
  const state = builder._schemaRuntimeDefinition;
  const input = builder._inputRuntimeDefinition;
  const output = builder._outputRuntimeDefinition;
  if (!isStateSchemaLike(state) && !isStateSchemaLike(input) && !isStateSchemaLike(output)) {
    return undefined;
  }
  return {
    state: isStateSchemaLike(state) ? state.getJsonSchema() : null,
    input: isStateSchemaLike(input)
      ? input.getInputJsonSchema()
      : input === PARTIAL_STATE && isStateSchemaLike(state)
        ? state.getInputJsonSchema()
        : null,
    output: isStateSchemaLike(output) ? output.getJsonSchema() : null,
    config: null,
  };
}

function fromZodRegistry(graph: CompiledUserGraph): GraphSchemas | undefined {
  try {
    const pregel = graph as never;
    const found = {
      state: getUpdateTypeSchema(pregel) ?? null,
      input: getInputTypeSchema(pregel) ?? null,
      output: getOutputTypeSchema(pregel) ?? null,
      config: getConfigTypeSchema(pregel) ?? null,
    };
    return Object.values(found).some((s) => s !== null) ? found : undefined;
  } catch {
    // Not a graph the registry knows (an Annotation state): the next way.
    return undefined;
  }
}

function fromZod(builder: Builder): GraphSchemas | undefined {
  const convert = (schema: unknown): Record<string, unknown> | null => {
    if (!schema || !(isZodSchemaV4(schema) || isZodSchemaV3(schema))) return null;
    try {
      return toJsonSchema(schema);
    } catch {
      return null;
    }
  };
  const state = convert(builder._schemaRuntimeDefinition);
  const input =
    convert(builder._inputRuntimeDefinition) ?? (state ? { ...state, required: undefined } : null);
  const output = convert(builder._outputRuntimeDefinition);
  const config = convert(builder._configRuntimeSchema);
  return state || input || output || config ? { state, input, output, config } : undefined;
}

/** An `Annotation` state: its channels' names, any value each (no types at run time). */
function fromChannels(graph: CompiledUserGraph): GraphSchemas {
  const pregel = graph as {
    channels?: Record<string, unknown>;
    inputChannels?: string | string[];
    outputChannels?: string | string[];
  };
  // A graph's input is its `__start__` channel (the state's keys); its output the state's keys.
  const own = (channels: string | string[] | undefined) =>
    (channels === undefined ? [] : Array.isArray(channels) ? channels : [channels]).filter(
      (key) => !key.startsWith('__') && !key.startsWith('branch:'),
    );
  const object = (keys: readonly string[], title: string) => ({
    title,
    type: 'object',
    properties: Object.fromEntries(keys.map((key) => [key, {}])),
  });
  const state = own(Object.keys(pregel.channels ?? {}));
  const input = own(pregel.inputChannels);
  const output = own(pregel.outputChannels);
  return {
    state: object(state, 'State'),
    input: object(input.length > 0 ? input : state, 'Input'),
    output: object(output.length > 0 ? output : state, 'Output'),
    config: null,
  };
}

const MESSAGE = {
  type: 'object',
  properties: {
    type: { type: 'string', enum: ['human', 'ai', 'tool', 'system'] },
    content: {
      anyOf: [{ type: 'string' }, { type: 'array', items: { type: 'object' } }],
    },
    id: { type: 'string' },
  },
  required: ['type', 'content'],
};

/**
 * Our agents (`agent:<name>`): a run answers the last human message of `input.messages`; the
 * thread's state is the agent graph's channels (libs/runtime/src/graph/agent-state.ts); a run
 * reads no config (its agent's definition configures it).
 */
const AGENT_STATE = {
  title: 'AgentState',
  type: 'object',
  properties: {
    messages: { type: 'array', items: MESSAGE },
    todos: {
      type: 'array',
      items: {
        type: 'object',
        properties: { content: { type: 'string' }, status: { type: 'string' } },
      },
    },
    eventMark: { type: ['string', 'null'] },
    context: {
      type: ['object', 'null'],
      properties: {
        summary: { type: ['string', 'null'] },
        compacted: { type: ['object', 'null'] },
        token_ratio: { type: 'number' },
      },
    },
    cleared: {
      type: ['object', 'null'],
      properties: {
        message_count: { type: 'integer' },
        last_message_id: { type: ['string', 'null'] },
      },
    },
  },
};

const AGENT_SCHEMAS: GraphSchemas = {
  input: {
    title: 'AgentInput',
    type: 'object',
    properties: {
      messages: {
        type: 'array',
        items: MESSAGE,
        minItems: 1,
        description: 'the last human message with text content is what the agent answers',
      },
    },
    required: ['messages'],
  },
  output: AGENT_STATE,
  state: AGENT_STATE,
  config: { title: 'AgentConfig', type: 'object', properties: {}, additionalProperties: false },
};
