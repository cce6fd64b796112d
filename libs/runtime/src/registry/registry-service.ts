import type {
  AgentView,
  FieldIssue,
  McpServerConfig,
  McpServerView,
  ProviderView,
  RegistrySource,
} from '@cognition/contracts';
import type { RegistryEntry, RegistryKind, RegistryStore } from '@cognition/storage';
import type { AgentDefinition } from '../agents/agent';
import { DEFAULT_EXPOSE } from '../agents/agent';
import { parseAgentDefinition } from '../agents/load-agents';
import { RuntimeError } from '../errors';
import type { Logger } from '../logger';
import { silentLogger } from '../logger';
import type { ProviderConfig } from '../providers/config';
import type { ConfigRegistry, RegistrySnapshot } from './config-registry';
import { API_SOURCE, storedProvider } from './config-registry';

/** A write of the registry API: the definition document and, optionally, the version it replaces. */
export interface RegistryWrite {
  definition: unknown;
  /** Replace only the stored entry at exactly this version (409 otherwise). */
  expectedVersion?: number;
}

function invalid(what: string, issues: FieldIssue[]): RuntimeError {
  return new RuntimeError(
    'VALIDATION_ERROR',
    `Invalid ${what}: ${issues.map((i) => `${i.path}: ${i.message}`).join('; ')}`,
    { issues },
  );
}

function asObject(definition: unknown, what: string): Record<string, unknown> {
  if (definition === null || typeof definition !== 'object' || Array.isArray(definition)) {
    throw invalid(what, [{ path: '(root)', message: 'expected an object' }]);
  }
  return definition as Record<string, unknown>;
}

/** The key of `definition` naming the entry must agree with the path's name when both are given. */
function checkName(
  definition: Record<string, unknown>,
  field: string,
  name: string | undefined,
  what: string,
): string {
  const given = definition[field];
  if (given !== undefined && typeof given !== 'string') {
    throw invalid(what, [{ path: field, message: 'expected a string' }]);
  }
  if (name !== undefined && given !== undefined && given !== name) {
    throw invalid(what, [{ path: field, message: `must be "${name}" (the name in the path)` }]);
  }
  const resolved = name ?? given;
  if (resolved === undefined) throw invalid(what, [{ path: field, message: 'required' }]);
  return resolved;
}

/** One field of a stored definition's MCP server entry (any JSON). */
function fieldOf(server: unknown, field: string): unknown {
  if (server === null || typeof server !== 'object') return undefined;
  return (server as Record<string, unknown>)[field];
}

/**
 * The definition with the write-only MCP secrets resolved like a provider's API key: a server
 * that leaves out `env` (stdio) or `headers` (HTTP) keeps those stored for the server of the same
 * name; `null` removes them; an object replaces them.
 */
function withStoredMcpSecrets(
  input: Record<string, unknown>,
  stored: RegistryEntry | null,
): Record<string, unknown> {
  const servers = input['mcp_servers'];
  if (!Array.isArray(servers)) return input;
  const storedServers = stored?.data['mcp_servers'];
  const previous = new Map<unknown, unknown>(
    Array.isArray(storedServers)
      ? storedServers.map((server: unknown) => [fieldOf(server, 'name'), server])
      : [],
  );
  return {
    ...input,
    mcp_servers: servers.map((server: unknown) => {
      if (server === null || typeof server !== 'object' || Array.isArray(server)) return server;
      const copy = { ...(server as Record<string, unknown>) };
      const field = 'command' in copy ? 'env' : 'url' in copy ? 'headers' : null;
      if (field === null) return copy;
      if (copy[field] === null) {
        delete copy[field];
      } else if (copy[field] === undefined) {
        const kept = fieldOf(previous.get(copy['name']), field);
        if (kept !== undefined) copy[field] = kept;
      }
      return copy;
    }),
  };
}

function readOnly(kind: RegistryKind, name: string, source: RegistrySource): RuntimeError {
  const where =
    source === 'builtin' ? 'built into the server' : "defined by the server's configuration";
  return new RuntimeError(
    'CONFLICT',
    `The ${kind} "${name}" is ${where} (source ${source}) and read-only: the registry API changes only its own entries, and cannot define another ${kind} with this name`,
  );
}

function notFound(kind: RegistryKind, name: string): RuntimeError {
  return new RuntimeError('NOT_FOUND', `No ${kind} "${name}"`);
}

function agentSource(agent: AgentDefinition): RegistrySource {
  if (agent.source === 'builtin') return 'builtin';
  return agent.source === API_SOURCE ? 'api' : 'file';
}

function meta(source: RegistrySource, entry: RegistryEntry | undefined) {
  return {
    source,
    read_only: source !== 'api',
    version: entry?.version ?? null,
    created_at: entry?.createdAt.toISOString() ?? null,
    updated_at: entry?.updatedAt.toISOString() ?? null,
  };
}

/** An MCP server without the values of its `env`/`headers` (write-only secrets). */
function mcpServerView(server: McpServerConfig): McpServerView {
  if ('command' in server) {
    const { env, ...rest } = server;
    const names = Object.keys(env);
    return { ...rest, env_set: names.length > 0, env_names: names };
  }
  const { headers, ...rest } = server;
  const names = Object.keys(headers);
  return { ...rest, headers_set: names.length > 0, header_names: names };
}

function agentView(agent: AgentDefinition, entry?: RegistryEntry): AgentView {
  const source = agentSource(agent);
  return {
    name: agent.name,
    description: agent.description,
    mode: agent.mode,
    tools: [...agent.tools],
    model: agent.model,
    temperature: agent.temperature,
    context: agent.context ?? null,
    interrupt_on: Object.fromEntries(
      Object.entries(agent.interruptOn).map(([tool, allowed]) => [tool, { allowed: [...allowed] }]),
    ),
    mcp_servers: agent.mcpServers.map(mcpServerView),
    skills: agent.skills === null ? null : [...agent.skills],
    expose: { ...DEFAULT_EXPOSE, ...agent.expose },
    system_prompt: agent.systemPrompt,
    file: source === 'file' ? agent.source : null,
    ...meta(source, entry),
  };
}

/** A provider as callers see it: everything but the API key. */
function providerView(
  provider: ProviderConfig,
  entry: RegistryEntry | undefined,
  environmentProviderId: string | undefined,
): ProviderView {
  const source: RegistrySource = entry
    ? 'api'
    : provider.id === environmentProviderId
      ? 'environment'
      : 'file';
  const { source: _source, read_only, created_at, updated_at, version } = meta(source, entry);
  return {
    id: provider.id,
    kind: provider.kind,
    model: provider.model,
    models: [...new Set([provider.model, ...(provider.models ?? [])])],
    baseUrl: provider.baseUrl ?? null,
    priority: provider.priority,
    enabled: provider.enabled,
    temperature: provider.temperature ?? null,
    maxTokens: provider.maxTokens ?? null,
    maxRetries: provider.maxRetries,
    timeoutMs: provider.timeoutMs,
    apiKeySet: provider.apiKey !== undefined,
    source,
    readOnly: read_only,
    version,
    createdAt: created_at,
    updatedAt: updated_at,
  };
}

function entryOf(
  snapshot: RegistrySnapshot,
  kind: RegistryKind,
  name: string,
): RegistryEntry | undefined {
  return snapshot.entries.find((e) => e.kind === kind && e.name === name);
}

/**
 * The registry API's one service (tRPC `agents.*`/`providers.*` and REST `/agents`,
 * `/providers` call it): reads of every agent and provider in force, and validated, versioned
 * writes of the stored ones. Agents are validated exactly like agent files (one parser) plus
 * "some enabled provider serves its model"; providers with the providers file's schema.
 * Provider API keys and MCP servers' `env`/`headers` values are write-only: no answer carries
 * one, and a write without them keeps the stored ones (`null` removes them). The store given
 * encrypts them at rest (`SecretRegistryStore`, from the composition root).
 */
export class RegistryService {
  constructor(
    private readonly registry: ConfigRegistry,
    private readonly store: RegistryStore,
    /** Records every change (kind, name, version; never a definition: it may hold a key). */
    private readonly logger: Logger = silentLogger,
  ) {}

  async listAgents(): Promise<AgentView[]> {
    const snapshot = await this.registry.current();
    return snapshot.agents.list().map((a) => agentView(a, entryOf(snapshot, 'agent', a.name)));
  }

  async getAgent(name: string): Promise<AgentView> {
    const snapshot = await this.registry.current();
    const agent = snapshot.agents.get(name);
    if (!agent) throw notFound('agent', name);
    return agentView(agent, entryOf(snapshot, 'agent', name));
  }

  /** POST: creates `definition.name`; CONFLICT when it exists. */
  createAgent(definition: unknown): Promise<AgentView> {
    return this.writeAgent(undefined, { definition }, null);
  }

  /** PUT: creates or replaces `name` (at `expectedVersion` when given). */
  putAgent(name: string, write: RegistryWrite): Promise<AgentView> {
    return this.writeAgent(name, write, write.expectedVersion);
  }

  deleteAgent(name: string, expectedVersion?: number): Promise<void> {
    return this.remove('agent', name, expectedVersion);
  }

  async listProviders(): Promise<ProviderView[]> {
    const snapshot = await this.registry.current();
    return snapshot.providers.config.providers.map((p) =>
      providerView(
        p,
        entryOf(snapshot, 'provider', p.id),
        snapshot.providers.config.environmentProviderId,
      ),
    );
  }

  async getProvider(id: string): Promise<ProviderView> {
    const snapshot = await this.registry.current();
    const provider = snapshot.providers.get(id);
    if (!provider) throw notFound('provider', id);
    return providerView(
      provider,
      entryOf(snapshot, 'provider', id),
      snapshot.providers.config.environmentProviderId,
    );
  }

  createProvider(definition: unknown): Promise<ProviderView> {
    return this.writeProvider(undefined, { definition }, null);
  }

  putProvider(id: string, write: RegistryWrite): Promise<ProviderView> {
    return this.writeProvider(id, write, write.expectedVersion);
  }

  deleteProvider(id: string, expectedVersion?: number): Promise<void> {
    return this.remove('provider', id, expectedVersion);
  }

  private async writeAgent(
    pathName: string | undefined,
    write: RegistryWrite,
    expectedVersion: number | null | undefined,
  ): Promise<AgentView> {
    const what = 'agent definition';
    const given = asObject(write.definition, what);
    const name = checkName(given, 'name', pathName, what);
    const stored = expectedVersion === null ? null : await this.store.get('agent', name);
    const input = withStoredMcpSecrets(given, stored);
    const result = parseAgentDefinition(input, { source: API_SOURCE, name });
    if ('issues' in result) throw invalid(what, result.issues);
    const { agent } = result;
    const snapshot = await this.registry.current();
    const issues: FieldIssue[] = [];
    if (agent.model !== null && !snapshot.providers.servesModel(agent.model)) {
      issues.push({ path: 'model', message: `no enabled provider serves model "${agent.model}"` });
    }
    const summaryModel = agent.context?.summary_model;
    if (summaryModel !== undefined && !snapshot.providers.servesModel(summaryModel)) {
      issues.push({
        path: 'context.summary_model',
        message: `no enabled provider serves model "${summaryModel}"`,
      });
    }
    if (issues.length > 0) throw invalid(what, issues);
    const fixed = this.registry.staticAgents.get(name);
    if (fixed) throw readOnly('agent', name, agentSource(fixed));
    const { name: _name, ...data } = input;
    const entry = await this.store.put({
      kind: 'agent',
      name,
      data,
      ...(expectedVersion !== undefined ? { expectedVersion } : {}),
    });
    this.saved(entry);
    return agentView(agent, entry);
  }

  private async writeProvider(
    pathId: string | undefined,
    write: RegistryWrite,
    expectedVersion: number | null | undefined,
  ): Promise<ProviderView> {
    const what = 'provider';
    const input = asObject(write.definition, what);
    const id = checkName(input, 'id', pathId, what);
    if (this.registry.staticProviders.get(id)) throw readOnly('provider', id, 'file');
    const { id: _id, apiKey, ...rest } = input;
    const data: Record<string, unknown> = { ...rest };
    if (apiKey === undefined) {
      // Write-only secret: a write that leaves the key out keeps the stored one.
      const stored = expectedVersion === null ? null : await this.store.get('provider', id);
      if (stored?.data['apiKey'] !== undefined) data['apiKey'] = stored.data['apiKey'];
    } else if (apiKey !== null) {
      data['apiKey'] = apiKey;
    }
    const now = new Date();
    const candidate: RegistryEntry = {
      kind: 'provider',
      name: id,
      version: 0,
      data,
      createdAt: now,
      updatedAt: now,
    };
    const result = storedProvider(candidate);
    if ('issues' in result) throw invalid(what, result.issues);
    const entry = await this.store.put({
      kind: 'provider',
      name: id,
      data,
      ...(expectedVersion !== undefined ? { expectedVersion } : {}),
    });
    this.saved(entry);
    return providerView(result.provider, entry, undefined);
  }

  private saved(entry: RegistryEntry): void {
    this.logger.info(
      { kind: entry.kind, name: entry.name, version: entry.version },
      `Registry: ${entry.kind} "${entry.name}" saved (version ${entry.version})`,
    );
  }

  private async remove(kind: RegistryKind, name: string, expectedVersion?: number): Promise<void> {
    const deleted = await this.store.delete({
      kind,
      name,
      ...(expectedVersion !== undefined ? { expectedVersion } : {}),
    });
    if (deleted) {
      this.logger.info({ kind, name }, `Registry: ${kind} "${name}" deleted`);
      return;
    }
    if (kind === 'agent') {
      const fixed = this.registry.staticAgents.get(name);
      if (fixed) throw readOnly(kind, name, agentSource(fixed));
    } else if (this.registry.staticProviders.get(name)) {
      throw readOnly(kind, name, 'file');
    }
    throw notFound(kind, name);
  }
}
