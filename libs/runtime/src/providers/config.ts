import type { FieldIssue } from '@cognition/contracts';
import { toFieldIssues } from '@cognition/contracts';
import { parse as parseYaml } from 'yaml';
import { z } from 'zod';
import { RuntimeError } from '../errors';
import { parsePricesFile } from './prices-file';
import { PriceSchema } from './pricing';

export const PROVIDER_KINDS = ['openai', 'anthropic', 'openai_compatible'] as const;
export type ProviderKind = (typeof PROVIDER_KINDS)[number];

/**
 * One configured LLM endpoint. `model` is its default model; it serves `model` plus `models`.
 * Lower `priority` wins: the default provider is the enabled one with the lowest priority
 * (ties keep configuration order).
 */
export const ProviderConfigSchema = z
  .strictObject({
    id: z
      .string()
      .min(1)
      .max(64)
      .regex(/^[a-zA-Z0-9][a-zA-Z0-9_.-]*$/, 'provider ids are letters, digits, ., - and _'),
    kind: z.enum(PROVIDER_KINDS),
    model: z.string().min(1).max(256),
    apiKey: z.string().min(1).optional(),
    baseUrl: z.url({ protocol: /^https?$/ }).optional(),
    priority: z.number().int().default(100),
    enabled: z.boolean().default(true),
    models: z.array(z.string().min(1).max(256)).optional(),
    temperature: z.number().min(0).max(2).optional(),
    maxTokens: z.number().int().min(1).optional(),
    /** Retries of a failed request (429, 5xx, network) by the LangChain client. */
    maxRetries: z.number().int().min(0).max(10).default(2),
    /** Per-request timeout. */
    timeoutMs: z.number().int().min(1).default(120_000),
  })
  .superRefine((provider, ctx) => {
    if (!provider.enabled) return;
    if (provider.kind !== 'openai_compatible' && provider.apiKey === undefined) {
      ctx.addIssue({ code: 'custom', path: ['apiKey'], message: `required for ${provider.kind}` });
    }
    if (provider.kind === 'openai_compatible' && provider.baseUrl === undefined) {
      ctx.addIssue({
        code: 'custom',
        path: ['baseUrl'],
        message: 'required for openai_compatible',
      });
    }
  });
export type ProviderConfig = z.output<typeof ProviderConfigSchema>;

/**
 * Typed LLM configuration of the runtime. `prices` and `contextWindows` extend and override the
 * built-in tables (matched like prices: exact model name, else the longest `<entry>-` prefix).
 */
const LlmConfigSchema = z
  .strictObject({
    providers: z.array(ProviderConfigSchema).default([]),
    prices: z.record(z.string().min(1), PriceSchema).default({}),
    /**
     * Prices by provider (a provider id or kind; `*`: any provider), then model: what
     * COGNITION_PRICES_FILE gives. They beat `prices` and the built-in table.
     */
    providerPrices: z
      .record(z.string().min(1), z.record(z.string().min(1), PriceSchema))
      .default({}),
    /** The date the prices file states (`as_of`), null when none. */
    pricesAsOf: z.string().nullable().default(null),
    /** Context windows (tokens) by model; extends and overrides the built-in table. */
    contextWindows: z.record(z.string().min(1), z.number().int().min(256)).default({}),
  })
  .superRefine((config, ctx) => {
    const seen = new Set<string>();
    config.providers.forEach((provider, index) => {
      if (seen.has(provider.id)) {
        ctx.addIssue({
          code: 'custom',
          path: ['providers', index, 'id'],
          message: `duplicate provider id "${provider.id}"`,
        });
      }
      seen.add(provider.id);
    });
  });
/**
 * `environmentProviderId`: the provider the environment variables defined (set by
 * {@link resolveLlmConfig} only, never read from a file), so the registry can say where each
 * provider comes from.
 */
export type LlmConfig = z.output<typeof LlmConfigSchema> & { environmentProviderId?: string };
export type LlmConfigInput = z.input<typeof LlmConfigSchema>;

function configError(issues: FieldIssue[], prefix?: string): RuntimeError {
  const named = issues.map((i) => ({
    path: prefix ? `${prefix}: ${i.path}` : i.path,
    message: i.message,
  }));
  return new RuntimeError(
    'PROVIDER_CONFIG_ERROR',
    `Invalid LLM provider configuration: ${named.map((i) => `${i.path}: ${i.message}`).join('; ')}`,
    { issues: named },
  );
}

/**
 * Validates a typed configuration (e.g. built by hand or by tests). `environmentProviderId` is
 * kept when it names one of the providers (it is not part of the file's schema).
 */
export function parseLlmConfig(input: unknown): LlmConfig {
  const { environmentProviderId, ...rest } = (input ?? {}) as {
    environmentProviderId?: unknown;
  };
  const result = LlmConfigSchema.safeParse(rest);
  if (!result.success) throw configError(toFieldIssues(result.error));
  return typeof environmentProviderId === 'string' &&
    result.data.providers.some((p) => p.id === environmentProviderId)
    ? { ...result.data, environmentProviderId }
    : result.data;
}

/**
 * The plain values the server reads from its environment (the runtime never reads
 * `process.env` itself).
 */
export interface LlmEnvValues {
  /** `COGNITION_LLM_PROVIDER`: openai | anthropic | openai_compatible. */
  provider?: string;
  /** `COGNITION_LLM_MODEL`. */
  model?: string;
  /** `OPENAI_API_KEY`. */
  openaiApiKey?: string;
  /** `ANTHROPIC_API_KEY`. */
  anthropicApiKey?: string;
  /** `COGNITION_OPENAI_COMPATIBLE_BASE_URL`. */
  openaiCompatibleBaseUrl?: string;
  /** `COGNITION_OPENAI_COMPATIBLE_API_KEY`. */
  openaiCompatibleApiKey?: string;
  /** An optional providers file (JSON or YAML `{ providers, prices, contextWindows }`). */
  providersFile?: { path: string; content: string };
  /** `COGNITION_PRICES_FILE`: prices per provider/model (see `parsePricesFile`). */
  pricesFile?: { path: string; content: string };
}

const ENV_NAMES = {
  provider: 'COGNITION_LLM_PROVIDER',
  model: 'COGNITION_LLM_MODEL',
  openai: 'OPENAI_API_KEY',
  anthropic: 'ANTHROPIC_API_KEY',
  baseUrl: 'COGNITION_OPENAI_COMPATIBLE_BASE_URL',
  compatibleKey: 'COGNITION_OPENAI_COMPATIBLE_API_KEY',
} as const;

/** Priority of the provider defined by environment variables: it beats file providers. */
const ENV_PROVIDER_PRIORITY = 0;

function blankToUndefined(value: string | undefined): string | undefined {
  return value === undefined || value.trim() === '' ? undefined : value.trim();
}

/** Credentials from the environment fill in what a provider entry leaves out. */
function withEnvDefaults(
  provider: Record<string, unknown>,
  env: LlmEnvValues,
): Record<string, unknown> {
  const out = { ...provider };
  if (out.apiKey === undefined) {
    const key =
      out.kind === 'openai'
        ? env.openaiApiKey
        : out.kind === 'anthropic'
          ? env.anthropicApiKey
          : out.kind === 'openai_compatible'
            ? env.openaiCompatibleApiKey
            : undefined;
    if (blankToUndefined(key) !== undefined) out.apiKey = blankToUndefined(key);
  }
  if (out.kind === 'openai_compatible' && out.baseUrl === undefined) {
    const baseUrl = blankToUndefined(env.openaiCompatibleBaseUrl);
    if (baseUrl !== undefined) out.baseUrl = baseUrl;
  }
  return out;
}

function parseProvidersFile(file: { path: string; content: string }): Record<string, unknown> {
  let value: unknown;
  try {
    value = parseYaml(file.content) as unknown;
  } catch (error) {
    throw configError([{ path: '(file)', message: (error as Error).message }], file.path);
  }
  if (value === null || value === undefined) return {};
  if (typeof value !== 'object' || Array.isArray(value)) {
    throw configError(
      [{ path: '(root)', message: 'expected an object with a providers list' }],
      file.path,
    );
  }
  return value as Record<string, unknown>;
}

/** The model used when a provider is chosen by its API key alone and no model is named. */
export const DEFAULT_MODELS = { openai: 'gpt-4o-mini', anthropic: 'claude-haiku-4-5' } as const;

/** How the environment's provider was chosen, for the startup log. */
export interface EnvProviderChoice {
  kind: 'openai' | 'anthropic';
  model: string;
  /** One sentence a newcomer reads in the first log lines. */
  explanation: string;
}

/**
 * The provider a newcomer gets from an API key alone: with neither `COGNITION_LLM_PROVIDER` nor
 * a providers file, `OPENAI_API_KEY` selects openai and `ANTHROPIC_API_KEY` anthropic, with
 * `COGNITION_LLM_MODEL` or the kind's {@link DEFAULT_MODELS} entry. When both keys are present
 * OpenAI is chosen (the first documented provider) and the explanation says how to pick the other.
 * Null when no key is present or the provider is configured explicitly.
 */
export function providerFromKeys(env: LlmEnvValues): EnvProviderChoice | null {
  if (blankToUndefined(env.provider) !== undefined) return null;
  const openai = blankToUndefined(env.openaiApiKey) !== undefined;
  const anthropic = blankToUndefined(env.anthropicApiKey) !== undefined;
  if (!openai && !anthropic) return null;
  const kind = openai ? 'openai' : 'anthropic';
  const named = blankToUndefined(env.model);
  const model = named ?? DEFAULT_MODELS[kind];
  const key = openai ? ENV_NAMES.openai : ENV_NAMES.anthropic;
  const modelNote = named
    ? `model ${model} from ${ENV_NAMES.model}`
    : `default model ${model}; ${ENV_NAMES.model} changes it`;
  const both =
    openai && anthropic
      ? ` ${ENV_NAMES.anthropic} is set too: with both keys OpenAI is used, ${ENV_NAMES.provider}=anthropic picks Anthropic.`
      : '';
  return {
    kind,
    model,
    explanation: `Using ${kind} (${modelNote}) because ${key} is set and ${ENV_NAMES.provider} is not.${both}`,
  };
}

/**
 * Builds the typed configuration from environment values and an optional providers file.
 * - File providers take their missing `apiKey` (and an openai_compatible `baseUrl`) from the
 *   matching environment values.
 * - `COGNITION_LLM_PROVIDER` adds a provider with id = kind and priority 0 (it replaces a file
 *   provider with the same id), using `COGNITION_LLM_MODEL` and the kind's credentials.
 * - With neither, an API key alone selects its provider ({@link providerFromKeys}).
 * No provider at all is valid here: runs then fail with PROVIDER_CONFIG_ERROR telling how to
 * configure one, and the rest of the server keeps working.
 *
 * @throws RuntimeError PROVIDER_CONFIG_ERROR naming each offending variable or file field.
 */
export function loadLlmConfig(env: LlmEnvValues): LlmConfig {
  return resolveLlmConfig(env).config;
}

/**
 * {@link loadLlmConfig}, plus how the environment's provider was chosen when an API key alone
 * chose it (null otherwise), for the server's startup log.
 */
export function resolveLlmConfig(env: LlmEnvValues): {
  config: LlmConfig;
  choice: EnvProviderChoice | null;
} {
  const resolved = resolveProviders(env);
  if (!env.pricesFile) return resolved;
  const file = parsePricesFile(env.pricesFile);
  return {
    ...resolved,
    config: { ...resolved.config, providerPrices: file.prices, pricesAsOf: file.asOf },
  };
}

function resolveProviders(env: LlmEnvValues): {
  config: LlmConfig;
  choice: EnvProviderChoice | null;
} {
  const fileValue = env.providersFile ? parseProvidersFile(env.providersFile) : {};
  const fileProviders = Array.isArray(fileValue.providers)
    ? (fileValue.providers as unknown[])
    : [];
  if (fileValue.providers !== undefined && !Array.isArray(fileValue.providers)) {
    throw configError([{ path: 'providers', message: 'expected a list' }], env.providersFile?.path);
  }
  const fromFile = {
    ...fileValue,
    providers: fileProviders.map((p) =>
      p !== null && typeof p === 'object' ? withEnvDefaults(p as Record<string, unknown>, env) : p,
    ),
  };
  const fileResult = LlmConfigSchema.safeParse(fromFile);
  if (!fileResult.success)
    throw configError(toFieldIssues(fileResult.error), env.providersFile?.path);
  const config = fileResult.data;

  const detected =
    blankToUndefined(env.provider) === undefined && config.providers.length === 0
      ? providerFromKeys(env)
      : null;
  const kind = blankToUndefined(env.provider) ?? detected?.kind;
  if (kind === undefined) return { config, choice: null };
  if (!(PROVIDER_KINDS as readonly string[]).includes(kind)) {
    throw configError([
      {
        path: ENV_NAMES.provider,
        message: `must be one of ${PROVIDER_KINDS.join(', ')}, got "${kind}"`,
      },
    ]);
  }
  const issues: FieldIssue[] = [];
  const model = blankToUndefined(env.model) ?? detected?.model;
  if (model === undefined)
    issues.push({ path: ENV_NAMES.model, message: `required with ${ENV_NAMES.provider}=${kind}` });
  const candidate = withEnvDefaults({ id: kind, kind }, env);
  if (kind !== 'openai_compatible' && candidate.apiKey === undefined) {
    issues.push({
      path: kind === 'openai' ? ENV_NAMES.openai : ENV_NAMES.anthropic,
      message: `required with ${ENV_NAMES.provider}=${kind}`,
    });
  }
  if (kind === 'openai_compatible' && candidate.baseUrl === undefined) {
    issues.push({
      path: ENV_NAMES.baseUrl,
      message: `required with ${ENV_NAMES.provider}=${kind}`,
    });
  }
  if (issues.length > 0) throw configError(issues);
  const parsed = ProviderConfigSchema.safeParse({
    ...candidate,
    model,
    priority: ENV_PROVIDER_PRIORITY,
  });
  if (!parsed.success) {
    throw configError(
      toFieldIssues(parsed.error).map((issue) => ({
        path: issue.path === 'baseUrl' ? ENV_NAMES.baseUrl : issue.path,
        message: issue.message,
      })),
    );
  }
  return {
    config: {
      ...config,
      providers: [parsed.data, ...config.providers.filter((p) => p.id !== parsed.data.id)],
      environmentProviderId: parsed.data.id,
    },
    choice: detected,
  };
}
