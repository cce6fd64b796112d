import type { SessionConfig } from '@cognition/contracts';
import type { AgentDefinition } from '../agents/agent';
import { RuntimeError } from '../errors';
import type { LlmConfig, LlmConfigInput, ProviderConfig } from './config';
import { parseLlmConfig } from './config';
import { DEFAULT_CONTEXT_WINDOWS } from './context-windows';
import type { Price, PriceTable } from './pricing';
import {
  ANY_PROVIDER,
  DEFAULT_PRICES,
  DEFAULT_PROVIDER_PRICES,
  modelEntry,
  providerPrice,
} from './pricing';

/** The model a run uses, with every setting resolved. */
export interface ResolvedModel {
  provider: ProviderConfig;
  model: string;
  temperature: number | undefined;
  maxTokens: number | undefined;
}

/** A provider as shown to API callers: never carries its API key. */
export interface ProviderSummary {
  id: string;
  kind: ProviderConfig['kind'];
  model: string;
  models: string[];
  priority: number;
  enabled: boolean;
  baseUrl: string | null;
}

export const NO_PROVIDER_MESSAGE =
  'No LLM provider is configured. Set OPENAI_API_KEY or ANTHROPIC_API_KEY (the provider follows ' +
  'the key, with a default model), or COGNITION_LLM_PROVIDER (openai, anthropic or ' +
  'openai_compatible) and COGNITION_LLM_MODEL together with OPENAI_API_KEY, ANTHROPIC_API_KEY or ' +
  'COGNITION_OPENAI_COMPATIBLE_BASE_URL, or list providers in a providers file.';

function serves(provider: ProviderConfig, model: string): boolean {
  return provider.model === model || (provider.models ?? []).includes(model);
}

function servedModels(provider: ProviderConfig): string[] {
  return [...new Set([provider.model, ...(provider.models ?? [])])];
}

/**
 * The configured providers and prices. Invariant: `enabled()` is sorted by priority (ties keep
 * configuration order), so its first entry is the default provider.
 */
export class ProviderRegistry {
  readonly config: LlmConfig;
  private readonly prices: PriceTable;
  private readonly windows: Readonly<Record<string, number>>;

  /** @throws RuntimeError PROVIDER_CONFIG_ERROR for an invalid configuration. */
  constructor(config: LlmConfigInput | LlmConfig) {
    this.config = parseLlmConfig(config);
    this.prices = mergePrices(this.config);
    this.windows = { ...DEFAULT_CONTEXT_WINDOWS, ...this.config.contextWindows };
  }

  enabled(): ProviderConfig[] {
    return this.config.providers
      .map((provider, index) => ({ provider, index }))
      .filter(({ provider }) => provider.enabled)
      .sort((a, b) => a.provider.priority - b.provider.priority || a.index - b.index)
      .map(({ provider }) => provider);
  }

  defaultProvider(): ProviderConfig | null {
    return this.enabled()[0] ?? null;
  }

  /** Whether an enabled provider serves `model` (what a session's or an agent's model must name). */
  servesModel(model: string): boolean {
    return this.enabled().some((p) => serves(p, model));
  }

  get(id: string): ProviderConfig | undefined {
    return this.config.providers.find((provider) => provider.id === id);
  }

  summaries(): ProviderSummary[] {
    return this.config.providers.map((p) => ({
      id: p.id,
      kind: p.kind,
      model: p.model,
      models: servedModels(p),
      priority: p.priority,
      enabled: p.enabled,
      baseUrl: p.baseUrl ?? null,
    }));
  }

  /**
   * The price of `model`, served by `provider` when known: the prices file's entry for the
   * provider id, then its kind, then any provider (`*`), then `prices`, then the built-in table.
   * null when unknown (never zero).
   */
  price(model: string, provider?: Pick<ProviderConfig, 'id' | 'kind'>): Price | null {
    return providerPrice(this.prices, provider ? [provider.id, provider.kind] : [], model);
  }

  /** The effective price table, for {@link priceOf} (e.g. the cost metric of telemetry). */
  priceTable(): PriceTable {
    return this.prices;
  }

  /** The context window of `model` in tokens (built-in table + `contextWindows`); null: unknown. */
  contextWindow(model: string): number | null {
    return modelEntry(model, this.windows);
  }

  /**
   * Checks per-session overrides when a session is created or updated, so a bad override is a
   * 422 at write time rather than a failed run later.
   * @throws RuntimeError VALIDATION_ERROR naming `config.providerId` or `config.model`.
   */
  validateSessionConfig(config: SessionConfig): void {
    if (config.providerId !== undefined) {
      const provider = this.get(config.providerId);
      if (!provider) {
        const known = this.config.providers.map((p) => p.id).join(', ') || 'none configured';
        throw RuntimeError.field(
          'config.providerId',
          `unknown provider "${config.providerId}" (known: ${known})`,
        );
      }
      if (!provider.enabled) {
        throw RuntimeError.field('config.providerId', `provider "${provider.id}" is disabled`);
      }
      if (config.model !== undefined && !serves(provider, config.model)) {
        throw RuntimeError.field(
          'config.model',
          `provider "${provider.id}" does not serve model "${config.model}" (serves: ${servedModels(provider).join(', ')})`,
        );
      }
      return;
    }
    if (config.model !== undefined && !this.servesModel(config.model)) {
      throw RuntimeError.field(
        'config.model',
        `no enabled provider serves model "${config.model}"`,
      );
    }
  }

  /**
   * The provider and settings of a run: the session's pinned provider, else the first enabled
   * provider (by priority) serving the requested model (session's, else the agent's), else the
   * default provider with its own model. Temperature: session, agent, provider; max tokens:
   * session, provider.
   * @throws RuntimeError PROVIDER_CONFIG_ERROR when nothing can serve the run.
   */
  resolve(
    config: SessionConfig,
    agent: Pick<AgentDefinition, 'name' | 'model' | 'temperature'>,
  ): ResolvedModel {
    const enabled = this.enabled();
    if (enabled.length === 0) throw new RuntimeError('PROVIDER_CONFIG_ERROR', NO_PROVIDER_MESSAGE);
    const requested = config.model ?? agent.model ?? undefined;
    const origin = config.model !== undefined ? 'the session config' : `agent "${agent.name}"`;
    let provider: ProviderConfig | undefined;
    if (config.providerId !== undefined) {
      provider = enabled.find((p) => p.id === config.providerId);
      if (!provider) {
        throw new RuntimeError(
          'PROVIDER_CONFIG_ERROR',
          `The session's provider "${config.providerId}" is not an enabled provider`,
        );
      }
      if (requested !== undefined && !serves(provider, requested)) {
        throw new RuntimeError(
          'PROVIDER_CONFIG_ERROR',
          `Provider "${provider.id}" does not serve model "${requested}" requested by ${origin}`,
        );
      }
    } else if (requested !== undefined) {
      provider = enabled.find((p) => serves(p, requested));
      if (!provider) {
        throw new RuntimeError(
          'PROVIDER_CONFIG_ERROR',
          `No enabled provider serves model "${requested}" requested by ${origin}`,
        );
      }
    } else {
      provider = enabled[0];
    }
    if (!provider) throw new RuntimeError('PROVIDER_CONFIG_ERROR', NO_PROVIDER_MESSAGE);
    return {
      provider,
      model: requested ?? provider.model,
      temperature: config.temperature ?? agent.temperature ?? provider.temperature,
      maxTokens: config.maxTokens ?? provider.maxTokens,
    };
  }
}

/**
 * One table where a plain lookup (provider id, then kind, then `*`) finds the configured price
 * before the built-in one: configured prices are copied into every built-in provider's entry.
 */
function mergePrices(config: LlmConfig): PriceTable {
  const file = config.providerPrices;
  const anyConfigured = { ...config.prices, ...(file[ANY_PROVIDER] ?? {}) };
  const table: Record<string, Record<string, Price>> = {};
  for (const [kind, prices] of Object.entries(DEFAULT_PROVIDER_PRICES)) {
    table[kind] = { ...prices, ...anyConfigured };
  }
  for (const [provider, prices] of Object.entries(file)) {
    if (provider === ANY_PROVIDER) continue;
    table[provider] = { ...(table[provider] ?? anyConfigured), ...prices };
  }
  table[ANY_PROVIDER] = { ...DEFAULT_PRICES, ...anyConfigured };
  return table;
}
