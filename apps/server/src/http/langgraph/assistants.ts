import { createHash } from 'node:crypto';
import type { AgentView } from '@cognition/contracts';
import type { UserGraph, UserGraphs } from '@cognition/runtime';
import { z } from 'zod';
import { JsonObject, notFound } from './wire';

/**
 * Assistants (docs/langgraph-api.md, "How it maps"): every graph of `langgraph.json` and every
 * primary agent of ours has one system assistant. Its id is the UUID v5 of the graph id in the
 * namespace `langgraph dev` uses, so ids match between the two servers, and a request may name
 * an assistant by its graph id as well.
 */
const NAMESPACE_GRAPH = '6ba7b821-9dad-11d1-80b4-00c04fd430c8';

/** Graph id of one of our agents. */
export const AGENT_GRAPH_PREFIX = 'agent:';

/** RFC 4122 name-based UUID, version 5 (SHA-1). */
function uuidV5(name: string, namespace: string): string {
  const hash = createHash('sha1')
    .update(Buffer.from(namespace.replace(/-/g, ''), 'hex'))
    .update(name, 'utf8')
    .digest();
  hash[6] = ((hash[6] ?? 0) & 0x0f) | 0x50;
  hash[8] = ((hash[8] ?? 0) & 0x3f) | 0x80;
  const hex = hash.subarray(0, 16).toString('hex');
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
}

/** The id of the system assistant of a graph (the same as `langgraph dev` gives it). */
export function systemAssistantId(graphId: string): string {
  return uuidV5(graphId, NAMESPACE_GRAPH);
}

export interface Assistant {
  assistant_id: string;
  graph_id: string;
  name: string;
  description: string | null;
  config: Record<string, unknown>;
  context: Record<string, unknown>;
  metadata: Record<string, unknown>;
  version: number;
  created_at: string;
  updated_at: string;
}

/** What an assistant runs: a user graph, or one of our agents. */
export type AssistantTarget = { kind: 'graph'; graph: UserGraph } | { kind: 'agent'; name: string };

export interface ResolvedAssistant {
  assistant: Assistant;
  target: AssistantTarget;
}

/** The system assistants of the server: user graphs first, then our primary agents. */
export class Assistants {
  private readonly startedAt = new Date().toISOString();

  constructor(
    private readonly graphs: UserGraphs,
    private readonly agents: () => Promise<AgentView[]>,
  ) {}

  async list(): Promise<ResolvedAssistant[]> {
    const fromGraphs = this.graphs.list().map((graph) => ({
      assistant: this.system(graph.graphId, graph.graphId, null),
      target: { kind: 'graph', graph } as const,
    }));
    const agents = (await this.agents()).filter((agent) => agent.mode === 'primary');
    const fromAgents = agents.map((agent) => ({
      assistant: this.system(`${AGENT_GRAPH_PREFIX}${agent.name}`, agent.name, agent.description),
      target: { kind: 'agent', name: agent.name } as const,
    }));
    return [...fromGraphs, ...fromAgents];
  }

  /** By assistant id or graph id; 404 "Assistant not found" otherwise. */
  async get(id: string): Promise<ResolvedAssistant> {
    const found = (await this.list()).find(
      (a) => a.assistant.assistant_id === id || a.assistant.graph_id === id,
    );
    if (!found) throw notFound('Assistant');
    return found;
  }

  private system(graphId: string, name: string, description: string | null): Assistant {
    return {
      assistant_id: systemAssistantId(graphId),
      graph_id: graphId,
      name,
      description,
      config: {},
      context: {},
      metadata: { created_by: 'system' },
      version: 1,
      created_at: this.startedAt,
      updated_at: this.startedAt,
    };
  }
}

export const AssistantSearchSchema = z
  .object({
    graph_id: z.string().optional(),
    name: z.string().optional(),
    metadata: JsonObject.optional(),
    limit: z.number().int().min(1).max(1000).default(10),
    offset: z.number().int().min(0).default(0),
    sort_by: z.enum(['assistant_id', 'graph_id', 'name', 'created_at', 'updated_at']).optional(),
    sort_order: z.enum(['asc', 'desc']).optional(),
    select: z.array(z.string()).optional(),
  })
  .strict();

export const AssistantCountSchema = AssistantSearchSchema.pick({
  graph_id: true,
  name: true,
  metadata: true,
}).strict();

/** The assistants matching a search or count body (exact metadata match per key). */
export function matching(
  all: readonly ResolvedAssistant[],
  filter: z.output<typeof AssistantCountSchema>,
): Assistant[] {
  return all
    .map((a) => a.assistant)
    .filter((a) => filter.graph_id === undefined || a.graph_id === filter.graph_id)
    .filter((a) => filter.name === undefined || a.name.includes(filter.name))
    .filter((a) =>
      Object.entries(filter.metadata ?? {}).every(
        ([key, value]) => JSON.stringify(a.metadata[key]) === JSON.stringify(value),
      ),
    );
}

/** The graph's nodes and edges, as `getGraphAsync().toJSON()` draws them; null for an agent. */
export async function drawGraph(target: AssistantTarget, xray: boolean): Promise<unknown> {
  if (target.kind !== 'graph') return null;
  const graph = target.graph.loaded;
  const drawable = (await (graph.getGraphAsync
    ? graph.getGraphAsync({ xray } as never)
    : graph.getGraph?.({ xray } as never))) as { toJSON(): unknown } | undefined;
  return drawable?.toJSON() ?? null;
}
