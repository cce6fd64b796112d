import { RuntimeError } from '../errors';
import type { AgentDefinition } from './agent';
import { BUILTIN_AGENTS } from './agent';
import { loadAgentFiles } from './load-agents';

/**
 * The agents a server offers: the built-ins (`default`, `readonly`) plus custom agents.
 * Invariants: names are unique; built-ins cannot be redefined (so `readonly` stays read-only).
 */
export class AgentRegistry {
  private readonly agents = new Map<string, AgentDefinition>();

  /** @throws RuntimeError VALIDATION_ERROR on a duplicate name or a redefined built-in. */
  constructor(custom: readonly AgentDefinition[] = []) {
    for (const agent of BUILTIN_AGENTS) this.agents.set(agent.name, agent);
    for (const agent of custom) {
      const existing = this.agents.get(agent.name);
      if (existing) {
        const what =
          existing.source === 'builtin'
            ? `redefines the built-in agent "${agent.name}"`
            : `defines "${agent.name}", already defined by ${existing.source}`;
        throw new RuntimeError('VALIDATION_ERROR', `Invalid agent file ${agent.source}: ${what}`, {
          issues: [{ path: `${agent.source}: name`, message: what }],
        });
      }
      this.agents.set(agent.name, agent);
    }
  }

  /** Built-ins plus the agent files of `<workspace>/.cognition/agents`. */
  static async load(workspace: string): Promise<AgentRegistry> {
    return new AgentRegistry(await loadAgentFiles(workspace));
  }

  get(name: string): AgentDefinition | undefined {
    return this.agents.get(name);
  }

  list(): AgentDefinition[] {
    return [...this.agents.values()];
  }

  subagents(): AgentDefinition[] {
    return this.list().filter((agent) => agent.mode === 'subagent');
  }

  /**
   * The agent a session may be bound to.
   * @throws RuntimeError VALIDATION_ERROR (field `agentName`) for an unknown or subagent-only name.
   */
  resolvePrimary(name: string): AgentDefinition {
    const agent = this.agents.get(name);
    if (!agent) {
      const known = this.list()
        .filter((a) => a.mode === 'primary')
        .map((a) => a.name)
        .join(', ');
      throw RuntimeError.field('agentName', `unknown agent "${name}" (available: ${known})`);
    }
    if (agent.mode !== 'primary') {
      throw RuntimeError.field(
        'agentName',
        `agent "${name}" is a subagent and can only be delegated to`,
      );
    }
    return agent;
  }
}
