import { createHash } from 'node:crypto';
import type { AgentView } from '@cognition/contracts';
import type { UserGraph, UserGraphs } from '@cognition/runtime';
import type { AssistantStore, AssistantVersion, Scope, StoredAssistant } from '@cognition/storage';
import { z } from 'zod';
import { JsonObject, LangGraphHttpError, notFound } from './wire';

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
  /** Stored through `POST /assistants` (versioned, per tenant); false: a system assistant. */
  stored: boolean;
}

/** An assistant as the wire shows it. */
function assistantView(stored: StoredAssistant): Assistant {
  return {
    assistant_id: stored.id,
    graph_id: stored.graphId,
    name: stored.name,
    description: stored.description,
    config: stored.config,
    context: stored.context,
    metadata: stored.metadata,
    version: stored.version,
    created_at: stored.createdAt.toISOString(),
    updated_at: stored.updatedAt.toISOString(),
  };
}

/** One version as `POST /assistants/{id}/versions` answers it. */
export function versionView(version: AssistantVersion): Record<string, unknown> {
  return {
    assistant_id: version.assistantId,
    version: version.version,
    graph_id: version.graphId,
    name: version.name,
    description: version.description,
    config: version.config,
    context: version.context,
    metadata: version.metadata,
    created_at: version.createdAt.toISOString(),
  };
}

/**
 * The assistants a caller sees: the system assistants of the server (user graphs first, then
 * our primary agents), and the tenant's stored ones.
 */
export class Assistants {
  private readonly startedAt = new Date().toISOString();

  constructor(
    private readonly graphs: UserGraphs,
    private readonly agents: () => Promise<AgentView[]>,
    readonly store: AssistantStore,
  ) {}

  /** Stored assistants (newest first), then the system ones. */
  async list(scope: Scope): Promise<ResolvedAssistant[]> {
    const system = await this.systemAssistants();
    const stored = (await this.store.list(scope)).flatMap((assistant) => {
      const target = this.targetOf(assistant.graphId, system);
      return target ? [{ assistant: assistantView(assistant), target, stored: true }] : [];
    });
    return [...stored, ...system];
  }

  /** By assistant id, or a graph id for its system assistant; 404 "Assistant not found". */
  async get(id: string, scope: Scope): Promise<ResolvedAssistant> {
    const system = await this.systemAssistants();
    const found = system.find(
      (a) => a.assistant.assistant_id === id || a.assistant.graph_id === id,
    );
    if (found) return found;
    const stored = await this.store.get(id, scope);
    const target = stored ? this.targetOf(stored.graphId, system) : null;
    if (!stored || !target) throw notFound('Assistant');
    return { assistant: assistantView(stored), target, stored: true };
  }

  /** A stored assistant of the caller's; 409 for a system one (see docs/langgraph-api.md). */
  async stored(id: string, scope: Scope): Promise<ResolvedAssistant> {
    const found = await this.get(id, scope);
    if (!found.stored) {
      throw new LangGraphHttpError(
        409,
        `Assistant ${found.assistant.assistant_id} is the system assistant of graph "${found.assistant.graph_id}" and cannot be changed: create an assistant of that graph instead`,
      );
    }
    return found;
  }

  /** The graph ids assistants can be made of (a 422 naming `field` otherwise). */
  async checkGraph(graphId: string, field: string): Promise<void> {
    const system = await this.systemAssistants();
    if (this.targetOf(graphId, system)) return;
    const known = system.map((a) => a.assistant.graph_id).join(', ');
    const message = `unknown graph "${graphId}" (graphs: ${known})`;
    throw new LangGraphHttpError(422, `Invalid body: ${field}: ${message}`, [
      { path: field, message },
    ]);
  }

  private async systemAssistants(): Promise<ResolvedAssistant[]> {
    const fromGraphs = this.graphs.list().map((graph) => ({
      assistant: this.system(
        graph.graphId,
        graph.graphId,
        null,
        this.graphs.defaultsOf(graph.graphId),
      ),
      target: { kind: 'graph', graph } as const,
      stored: false,
    }));
    const agents = (await this.agents()).filter((agent) => agent.mode === 'primary');
    const fromAgents = agents.map((agent) => ({
      assistant: this.system(`${AGENT_GRAPH_PREFIX}${agent.name}`, agent.name, agent.description),
      target: { kind: 'agent', name: agent.name } as const,
      stored: false,
    }));
    return [...fromGraphs, ...fromAgents];
  }

  /** What a graph id runs now; null when the graph is gone (its assistants then read as missing). */
  private targetOf(graphId: string, system: readonly ResolvedAssistant[]): AssistantTarget | null {
    return system.find((a) => a.assistant.graph_id === graphId)?.target ?? null;
  }

  private system(
    graphId: string,
    name: string,
    description: string | null,
    defaults: { config: Record<string, unknown>; context: Record<string, unknown> } = {
      config: {},
      context: {},
    },
  ): Assistant {
    return {
      assistant_id: systemAssistantId(graphId),
      graph_id: graphId,
      name,
      description,
      config: defaults.config,
      context: defaults.context,
      metadata: { created_by: 'system' },
      version: 1,
      created_at: this.startedAt,
      updated_at: this.startedAt,
    };
  }
}

const SORT_FIELDS = ['assistant_id', 'graph_id', 'name', 'created_at', 'updated_at'] as const;

export const AssistantSearchSchema = z
  .object({
    graph_id: z.string().optional(),
    name: z.string().optional(),
    metadata: JsonObject.optional(),
    limit: z.number().int().min(1).max(1000).default(10),
    offset: z.number().int().min(0).default(0),
    sort_by: z.enum(SORT_FIELDS).optional(),
    sort_order: z.enum(['asc', 'desc']).optional(),
    select: z
      .array(z.enum([...SORT_FIELDS, 'description', 'config', 'context', 'metadata', 'version']))
      .optional(),
  })
  .strict();

export const AssistantCountSchema = AssistantSearchSchema.pick({
  graph_id: true,
  name: true,
  metadata: true,
}).strict();

/**
 * The assistants matching a search or count body: graph id exact, name a case-insensitive
 * substring, metadata exact per key (as LangGraph's JSON containment for flat values).
 */
export function matching(
  all: readonly ResolvedAssistant[],
  filter: z.output<typeof AssistantCountSchema>,
): Assistant[] {
  const name = filter.name?.toLowerCase();
  return all
    .map((a) => a.assistant)
    .filter((a) => filter.graph_id === undefined || a.graph_id === filter.graph_id)
    .filter((a) => name === undefined || a.name.toLowerCase().includes(name))
    .filter((a) =>
      Object.entries(filter.metadata ?? {}).every(
        ([key, value]) => JSON.stringify(a.metadata[key]) === JSON.stringify(value),
      ),
    );
}

/** One page of a search: sorted (default newest first), sliced, the `select`ed fields only. */
export function searchPage(
  found: Assistant[],
  body: z.output<typeof AssistantSearchSchema>,
): Record<string, unknown>[] {
  const by = body.sort_by ?? 'created_at';
  const sign = (body.sort_order ?? (body.sort_by ? 'asc' : 'desc')) === 'asc' ? 1 : -1;
  const sorted = [...found].sort((a, b) => {
    const x = String(a[by]);
    const y = String(b[by]);
    return x < y ? -sign : x > y ? sign : 0;
  });
  const page = sorted.slice(body.offset, body.offset + body.limit);
  const select = body.select;
  if (!select) return page as unknown as Record<string, unknown>[];
  return page.map((a) =>
    Object.fromEntries(Object.entries(a).filter(([key]) => (select as string[]).includes(key))),
  );
}

/** The graph's nodes and edges, as `getGraphAsync().toJSON()` draws them; null for an agent. */
export async function drawGraph(target: AssistantTarget, xray: boolean | number): Promise<unknown> {
  if (target.kind !== 'graph') return null;
  const graph = target.graph.loaded;
  const drawable = (await (graph.getGraphAsync
    ? graph.getGraphAsync({ xray } as never)
    : graph.getGraph?.({ xray } as never))) as { toJSON(): unknown } | undefined;
  return drawable?.toJSON() ?? null;
}
