import type { ContextWindowView } from '@cognition/contracts';
import type { Scope, StorageBackend } from '@cognition/storage';
import type { BaseMessage } from '@langchain/core/messages';
import type { ClearedMark, ContextState } from '../graph/agent-state';
import { visibleHistory } from '../graph/agent-state';
import { sessionSystemPrompt } from '../sessions/system-prompt';
import { silentLogger } from '../logger';
import type { SkillLibrary } from '../skills/skill-library';
import { skillContext } from '../workspace/skill-context';
import type { AgentRegistry } from '../agents/registry';
import { RuntimeError } from '../errors';
import type { ProviderRegistry } from '../providers/registry';
import { ConfigRegistry, missingAgent } from '../registry/config-registry';
import type { ToolCatalogOptions } from '../tools/catalog';
import { ToolCatalog } from '../tools/catalog';
import { measureContext } from './compactor';
import { resolveContextSettings, toolSchemaTokens } from './setup';
import { tokenCounterFor } from './token-counter';

export interface ContextInspectorOptions {
  storage: Pick<StorageBackend, 'sessions' | 'checkpointer' | 'registry'>;
  /** The static agents and providers; the stored ones are added as for runs. */
  agents: AgentRegistry;
  providers: ProviderRegistry;
  /** The tool options the runs use (the tool schemas are part of every call). */
  tools?: ToolCatalogOptions;
  /**
   * The runs' skills: the view then counts the `## Skills` section and offers `read_skill` only
   * when the run would. (Memory files are not counted: reading them means opening the
   * session's sandbox, which a read-only view does not do.)
   */
  skills?: SkillLibrary;
}

/**
 * The context-window view of a session (`GET /sessions/{id}/context`): what its next model call
 * would be sent, measured exactly as the run measures it before sending — from the checkpoint,
 * the session's agent and model, and the agent's tools. Read-only.
 */
export class ContextInspector {
  private readonly catalog: ToolCatalog;
  private readonly registry: ConfigRegistry;

  constructor(private readonly options: ContextInspectorOptions) {
    this.catalog = new ToolCatalog(options.tools);
    this.registry = new ConfigRegistry({
      agents: options.agents,
      providers: options.providers,
      store: options.storage.registry,
    });
  }

  /**
   * @throws RuntimeError SESSION_NOT_FOUND (also outside `scope`), CONFLICT when the
   *   session's agent is not defined, PROVIDER_CONFIG_ERROR when no provider can serve it.
   */
  async view(sessionId: string, scope: Scope): Promise<ContextWindowView> {
    const { storage } = this.options;
    const session = await storage.sessions.get(sessionId, scope);
    if (!session) throw new RuntimeError('SESSION_NOT_FOUND', `Session not found: ${sessionId}`);
    const { agents, providers } = await this.registry.current();
    const agent = agents.get(session.agentName);
    if (!agent) throw missingAgent(session.agentName);
    const resolved = providers.resolve(session.config, agent);
    const settings = resolveContextSettings(agent, resolved.model, providers);
    const counter = tokenCounterFor(resolved.provider.kind, resolved.model);
    const tuple = await storage.checkpointer.getTuple({
      configurable: { thread_id: session.threadId },
    });
    const values = (tuple?.checkpoint.channel_values ?? {}) as {
      messages?: BaseMessage[];
      context?: ContextState | null;
      cleared?: ClearedMark | null;
    };
    // After a `clear`, the thread the model works with starts after the clear mark.
    const history = visibleHistory(values.messages ?? [], values.cleared);
    const none = settings.strategy === 'none';
    const state = none ? null : (values.context ?? null);
    const skills = await skillContext(
      this.options.skills ?? null,
      agent,
      this.catalog.forAgent(agent, agents.subagents()),
      silentLogger,
    );
    const base = sessionSystemPrompt(session, agent.systemPrompt);
    const measured = measureContext(history, state, {
      counter,
      systemPrompt: skills.section === '' ? base : `${base}\n\n${skills.section}`,
      toolSchemaTokens: toolSchemaTokens(skills.tools, counter),
      toolOutputMaxTokens: none ? Number.POSITIVE_INFINITY : settings.toolOutputMaxTokens,
    });
    const compacted = measured.start > 0 ? (state?.compacted ?? null) : null;
    return {
      session_id: session.id,
      agent: agent.name,
      model: resolved.model,
      strategy: settings.strategy,
      tokenizer: counter.name,
      window_tokens: settings.window,
      budget_tokens: none ? null : settings.budget,
      parts: measured.parts,
      will_compact: !none && measured.effectiveTokens > settings.budget,
      thread_messages: history.length,
      visible_messages: history.length - measured.start,
      truncated_tool_outputs: measured.truncatedToolOutputs,
      summary: compacted ? (state?.summary ?? null) : null,
      compacted,
    };
  }
}
