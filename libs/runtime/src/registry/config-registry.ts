import type { FieldIssue } from '@cognition/contracts';
import { toFieldIssues } from '@cognition/contracts';
import type { RegistryEntry, RegistryStore } from '@cognition/storage';
import type { AgentDefinition } from '../agents/agent';
import { RuntimeError } from '../errors';
import { parseAgentDefinition } from '../agents/load-agents';
import { AgentRegistry } from '../agents/registry';
import type { Logger } from '../logger';
import { silentLogger } from '../logger';
import type { ProviderConfig } from '../providers/config';
import { ProviderConfigSchema } from '../providers/config';
import { ProviderRegistry } from '../providers/registry';

/** `AgentDefinition.source` of the agents the registry API stored. */
export const API_SOURCE = 'api';

/**
 * A session bound to an agent that no longer exists (deleted through the registry API, or its
 * file removed): the session is fine, its binding is not, so CONFLICT naming the agent.
 */
export function missingAgent(name: string): RuntimeError {
  return new RuntimeError(
    'CONFLICT',
    `The session's agent "${name}" no longer exists (deleted, or its file removed): bind the session to another agent (agent_name) to send to it`,
  );
}

/** The agents and providers in force at one moment: the static ones plus the stored ones. */
export interface RegistrySnapshot {
  agents: AgentRegistry;
  providers: ProviderRegistry;
  /** The stored (`api`) entries the snapshot was built from, valid ones only. */
  entries: readonly RegistryEntry[];
}

/** A stored agent's definition, or why it cannot be used (issues relative to the document). */
function storedAgent(entry: RegistryEntry): { agent: AgentDefinition } | { issues: FieldIssue[] } {
  return parseAgentDefinition(entry.data, { source: API_SOURCE, name: entry.name });
}

/** A stored provider's configuration, or why it cannot be used. */
export function storedProvider(
  entry: RegistryEntry,
): { provider: ProviderConfig } | { issues: FieldIssue[] } {
  const parsed = ProviderConfigSchema.safeParse({ ...entry.data, id: entry.name });
  return parsed.success ? { provider: parsed.data } : { issues: toFieldIssues(parsed.error) };
}

/**
 * Answers "which agents and providers are in force" for every run start, session write and
 * registry read: the server's static ones (built-ins, agent files, the providers file and the
 * environment) plus the entries stored through the registry API.
 *
 * Each `current()` is one query listing the stored entries (a handful of rows); the registries
 * are rebuilt only when the entries differ from the last call's, so every node sees a change at
 * its next run without any invalidation message (several nodes share the database). A
 * stored entry that no longer validates (or whose name a static entry took since) is left out
 * and logged, never fatal: one bad row must not stop every run.
 */
export class ConfigRegistry {
  private cache: { key: string; snapshot: RegistrySnapshot } | null = null;

  constructor(
    private readonly options: {
      agents: AgentRegistry;
      providers: ProviderRegistry;
      store: RegistryStore;
      logger?: Logger;
    },
  ) {}

  /** The static agents (built-ins and files): read-only through the API. */
  get staticAgents(): AgentRegistry {
    return this.options.agents;
  }

  /** The static providers (providers file and environment): read-only through the API. */
  get staticProviders(): ProviderRegistry {
    return this.options.providers;
  }

  async current(): Promise<RegistrySnapshot> {
    const entries = await this.options.store.list();
    // The content itself is the key: a deleted and re-created entry is at version 1 again,
    // possibly within the same millisecond. A few small rows: cheap next to a model call.
    const key = JSON.stringify(entries.map((e) => [e.kind, e.name, e.version, e.data]));
    if (this.cache?.key === key) return this.cache.snapshot;
    const snapshot = this.build(entries);
    this.cache = { key, snapshot };
    return snapshot;
  }

  private build(entries: readonly RegistryEntry[]): RegistrySnapshot {
    const logger = this.options.logger ?? silentLogger;
    const { agents: staticAgents, providers: staticProviders } = this.options;
    const used: RegistryEntry[] = [];
    const agents: AgentDefinition[] = staticAgents.list().filter((a) => a.source !== 'builtin');
    const providers: ProviderConfig[] = [...staticProviders.config.providers];
    const skip = (entry: RegistryEntry, reason: string) =>
      logger.warn(
        { kind: entry.kind, name: entry.name, version: entry.version },
        `Stored ${entry.kind} "${entry.name}" is not used: ${reason}`,
      );
    for (const entry of entries) {
      if (entry.kind === 'agent') {
        if (staticAgents.get(entry.name)) {
          skip(entry, 'a built-in or file agent has this name');
          continue;
        }
        const result = storedAgent(entry);
        if ('issues' in result) {
          skip(entry, result.issues.map((i) => `${i.path}: ${i.message}`).join('; '));
          continue;
        }
        agents.push(result.agent);
      } else {
        if (staticProviders.get(entry.name)) {
          skip(entry, 'a provider of the server configuration has this id');
          continue;
        }
        const result = storedProvider(entry);
        if ('issues' in result) {
          // Paths only: a provider's issue never quotes the values (an API key among them).
          skip(entry, `invalid ${result.issues.map((i) => i.path).join(', ')}`);
          continue;
        }
        providers.push(result.provider);
      }
      used.push(entry);
    }
    return {
      agents: new AgentRegistry(agents),
      providers: new ProviderRegistry({ ...staticProviders.config, providers }),
      entries: used,
    };
  }
}
