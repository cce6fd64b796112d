import type { CircuitBreaker } from '@cognition/circuit-breaker';
import type { ContextSettings, ContextStrategy } from '@cognition/contracts';
import { CONTEXT_DEFAULTS, ContextSettingsSchema } from '@cognition/contracts';
import type { AgentDefinition } from '../agents/agent';
import { RuntimeError, errorMessage } from '../errors';
import type { ChatModelFactory } from '../providers/chat-model';
import { FALLBACK_CONTEXT_WINDOW } from '../providers/context-windows';
import type { ProviderRegistry, ResolvedModel } from '../providers/registry';
import { UsageMeter } from '../providers/usage';
import { toToolDefinition } from '../tools/catalog';
import type { RuntimeTool } from '../tools/types';
import { ContextCompactor } from './compactor';
import { Summarizer } from './summarizer';
import type { TokenCounter } from './token-counter';
import { tokenCounterFor } from './token-counter';

/** An agent's context settings for one model, every default applied. */
export interface ResolvedContextSettings {
  strategy: ContextStrategy;
  /** The model's window from the tables; null when unknown. */
  window: number | null;
  /** Tokens one call may be sent: `max_tokens`, else a share of the (or the fallback) window. */
  budget: number;
  keepLastMessages: number;
  toolOutputMaxTokens: number;
  summaryModel: string | null;
}

const DEFAULT_SETTINGS: ContextSettings = ContextSettingsSchema.parse({});

/** Tokens of an input window one may fill: {@link CONTEXT_DEFAULTS.window_share} of it. */
function budgetOf(window: number): number {
  return Math.floor(window * CONTEXT_DEFAULTS.window_share);
}

export function resolveContextSettings(
  agent: Pick<AgentDefinition, 'context'>,
  model: string,
  providers: Pick<ProviderRegistry, 'contextWindow'>,
): ResolvedContextSettings {
  const settings = agent.context ?? DEFAULT_SETTINGS;
  const window = providers.contextWindow(model);
  return {
    strategy: settings.strategy,
    window,
    budget: settings.max_tokens ?? budgetOf(window ?? FALLBACK_CONTEXT_WINDOW),
    keepLastMessages: settings.keep_last_messages,
    toolOutputMaxTokens: settings.tool_output_max_tokens,
    summaryModel: settings.summary_model ?? null,
  };
}

/** Tokens of the tool schemas as sent (their JSON: an estimate of each provider's encoding). */
export function toolSchemaTokens(tools: readonly RuntimeTool[], counter: TokenCounter): number {
  return tools.length === 0 ? 0 : counter.text(JSON.stringify(tools.map(toToolDefinition)));
}

export interface CompactorDeps {
  providers: ProviderRegistry;
  chatModelFactory: ChatModelFactory;
  breakerFor: (resolved: ResolvedModel) => CircuitBreaker;
}

/**
 * The compactor of a run of `agent` on `resolved` (null for strategy `none`: the model then sees
 * the whole thread, as without this feature). The summary model is `summary_model` resolved
 * like any model (first enabled provider serving it), else the run's model; its usage goes to
 * a meter nested in `meter`, so the run's usage and cost include it.
 * @throws RuntimeError PROVIDER_CONFIG_ERROR when no enabled provider serves `summary_model`.
 */
export async function createCompactor(
  input: {
    agent: AgentDefinition;
    resolved: ResolvedModel;
    tools: readonly RuntimeTool[];
    meter: UsageMeter;
    /** The system prompt the turn sends (the agent's plus its memory/policy artifacts). */
    systemPrompt?: string;
  },
  deps: CompactorDeps,
): Promise<ContextCompactor | null> {
  const { agent, resolved, tools, meter } = input;
  const settings = resolveContextSettings(agent, resolved.model, deps.providers);
  if (settings.strategy === 'none') return null;
  const counter = tokenCounterFor(resolved.provider.kind, resolved.model);
  let summarizer: Summarizer | null = null;
  if (settings.strategy === 'summarize') {
    const summaryResolved = resolveSummaryModel(agent, resolved, settings, deps.providers);
    const summaryMeter = new UsageMeter(
      summaryResolved.provider.id,
      summaryResolved.model,
      deps.providers.price(summaryResolved.model, summaryResolved.provider),
    );
    meter.addNested(summaryMeter);
    const summaryWindow = deps.providers.contextWindow(summaryResolved.model);
    summarizer = new Summarizer({
      model: await deps.chatModelFactory(summaryResolved),
      modelName: summaryResolved.model,
      breaker: deps.breakerFor(summaryResolved),
      meter: summaryMeter,
      counter: tokenCounterFor(summaryResolved.provider.kind, summaryResolved.model),
      inputBudget: budgetOf(summaryWindow ?? FALLBACK_CONTEXT_WINDOW),
    });
  }
  return new ContextCompactor({
    settings: {
      strategy: settings.strategy,
      budget: settings.budget,
      keepLastMessages: settings.keepLastMessages,
      toolOutputMaxTokens: settings.toolOutputMaxTokens,
    },
    counter,
    systemPrompt: input.systemPrompt ?? agent.systemPrompt,
    toolSchemaTokens: toolSchemaTokens(tools, counter),
    summarizer,
  });
}

function resolveSummaryModel(
  agent: AgentDefinition,
  resolved: ResolvedModel,
  settings: ResolvedContextSettings,
  providers: ProviderRegistry,
): ResolvedModel {
  if (settings.summaryModel === null || settings.summaryModel === resolved.model) {
    return resolved;
  }
  try {
    const summary = providers.resolve(
      {},
      { name: agent.name, model: settings.summaryModel, temperature: null },
    );
    return { ...summary, maxTokens: undefined };
  } catch (error) {
    throw new RuntimeError(
      'PROVIDER_CONFIG_ERROR',
      `Agent "${agent.name}": context.summary_model "${settings.summaryModel}" cannot be used: ${errorMessage(error)}`,
      { cause: error },
    );
  }
}
