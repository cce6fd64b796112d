import { z } from 'zod';

/** USD per million tokens. */
export const PriceSchema = z.strictObject({
  inputPerMillion: z.number().min(0),
  outputPerMillion: z.number().min(0),
  /** Input served from the prompt cache; the input price when absent. */
  cachedInputPerMillion: z.number().min(0).optional(),
});
export type Price = z.infer<typeof PriceSchema>;

/** The day the built-in prices were checked against the vendors' published list prices. */
export const DEFAULT_PRICES_AS_OF = '2025-11-01';

/**
 * List prices (USD per million tokens) of common models per provider kind, as published by
 * their vendors on {@link DEFAULT_PRICES_AS_OF}; `cachedInputPerMillion` is the price of input
 * served from the prompt cache (OpenAI cached input, Anthropic cache reads). Deployments
 * correct or extend them with `COGNITION_PRICES_FILE` (see docs/configuration.md).
 */
export const DEFAULT_PROVIDER_PRICES: Readonly<Record<string, Readonly<Record<string, Price>>>> = {
  openai: {
    'gpt-4o': { inputPerMillion: 2.5, outputPerMillion: 10, cachedInputPerMillion: 1.25 },
    'gpt-4o-mini': { inputPerMillion: 0.15, outputPerMillion: 0.6, cachedInputPerMillion: 0.075 },
    'gpt-4.1': { inputPerMillion: 2, outputPerMillion: 8, cachedInputPerMillion: 0.5 },
    'gpt-4.1-mini': { inputPerMillion: 0.4, outputPerMillion: 1.6, cachedInputPerMillion: 0.1 },
    'gpt-4.1-nano': { inputPerMillion: 0.1, outputPerMillion: 0.4, cachedInputPerMillion: 0.025 },
    o3: { inputPerMillion: 2, outputPerMillion: 8, cachedInputPerMillion: 0.5 },
    'o4-mini': { inputPerMillion: 1.1, outputPerMillion: 4.4, cachedInputPerMillion: 0.275 },
  },
  anthropic: {
    'claude-3-5-haiku': { inputPerMillion: 0.8, outputPerMillion: 4, cachedInputPerMillion: 0.08 },
    'claude-haiku-4-5': { inputPerMillion: 1, outputPerMillion: 5, cachedInputPerMillion: 0.1 },
    'claude-3-5-sonnet': { inputPerMillion: 3, outputPerMillion: 15, cachedInputPerMillion: 0.3 },
    'claude-3-7-sonnet': { inputPerMillion: 3, outputPerMillion: 15, cachedInputPerMillion: 0.3 },
    'claude-sonnet-4': { inputPerMillion: 3, outputPerMillion: 15, cachedInputPerMillion: 0.3 },
    'claude-opus-4': { inputPerMillion: 15, outputPerMillion: 75, cachedInputPerMillion: 1.5 },
  },
};

/** Every built-in price by model name alone (for lookups that do not know the provider). */
export const DEFAULT_PRICES: Readonly<Record<string, Price>> = Object.assign(
  {},
  ...Object.values(DEFAULT_PROVIDER_PRICES),
) as Record<string, Price>;

/**
 * Prices by provider, then model. A provider key is a configured provider id or a provider kind
 * (`openai`, `anthropic`, `openai_compatible`); the key `*` holds prices of any provider.
 */
export type PriceTable = Readonly<Record<string, Readonly<Record<string, Price>>>>;

/** The key of prices that apply whatever the provider. */
export const ANY_PROVIDER = '*';

/**
 * The entry of `model` in a table keyed by model name: an exact entry, else the longest entry
 * that is a prefix of the model followed by `-` (dated snapshots such as `gpt-4o-2024-08-06` or
 * `claude-3-5-sonnet-latest`). null when unknown.
 */
export function modelEntry<T>(model: string, table: Readonly<Record<string, T>>): T | null {
  const exact = table[model];
  if (exact !== undefined) return exact;
  let best: { key: string; value: T } | null = null;
  for (const [key, value] of Object.entries(table)) {
    if (model.startsWith(`${key}-`) && (!best || key.length > best.key.length)) {
      best = { key, value };
    }
  }
  return best?.value ?? null;
}

/** The price of `model` ({@link modelEntry}); an unknown price is never reported as zero. */
export function priceFor(model: string, table: Readonly<Record<string, Price>>): Price | null {
  return modelEntry(model, table);
}

/**
 * The price of `model` served by `provider` (a provider id, then its kind, then any provider),
 * in `table`. null when unknown.
 */
export function providerPrice(
  table: PriceTable,
  provider: string | readonly string[],
  model: string,
): Price | null {
  const keys = [...(typeof provider === 'string' ? [provider] : provider), ANY_PROVIDER];
  for (const key of keys) {
    const prices = table[key];
    const price = prices ? modelEntry(model, prices) : null;
    if (price) return price;
  }
  return null;
}

/**
 * Cost in USD rounded to 1e-6; null when the price is unknown. `cachedInputTokens` are part of
 * `inputTokens` (as providers report them) and are priced at the cached rate when the price has
 * one.
 */
export function costOf(
  inputTokens: number,
  outputTokens: number,
  price: Price | null,
  cachedInputTokens = 0,
): number | null {
  if (!price) return null;
  const cached = Math.min(Math.max(cachedInputTokens, 0), inputTokens);
  const cachedRate = price.cachedInputPerMillion ?? price.inputPerMillion;
  const cost =
    ((inputTokens - cached) * price.inputPerMillion +
      cached * cachedRate +
      outputTokens * price.outputPerMillion) /
    1e6;
  return Math.round(cost * 1e6) / 1e6;
}

/** What {@link priceOf} prices: one model call or a sum of them. */
export interface PricedUsage {
  /** A provider id or kind (`openai`, `anthropic`, ...). */
  provider: string;
  model: string;
  tokensIn: number;
  tokensOut: number;
  /** Input tokens served from the prompt cache (part of `tokensIn`). */
  cachedIn?: number;
}

/**
 * The cost of model usage: `{ costUsd }`, or `{ unknown: true }` when no price is known (an
 * unknown price is never zero). Pure; `table` defaults to the built-in prices, the runtime
 * passes its configured table (built-ins extended by COGNITION_PRICES_FILE).
 */
export function priceOf(
  usage: PricedUsage,
  table: PriceTable = DEFAULT_PROVIDER_PRICES,
): { costUsd: number } | { unknown: true } {
  const price = providerPrice(table, usage.provider, usage.model);
  const cost = costOf(usage.tokensIn, usage.tokensOut, price, usage.cachedIn ?? 0);
  return cost === null ? { unknown: true } : { costUsd: cost };
}
