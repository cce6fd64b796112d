import type { Price } from './config';

/**
 * List prices (USD per million tokens) of common models, as published by their vendors when
 * this table was written. Deployments correct or extend it through `LlmConfig.prices`.
 */
export const DEFAULT_PRICES: Readonly<Record<string, Price>> = {
  'gpt-4o': { inputPerMillion: 2.5, outputPerMillion: 10 },
  'gpt-4o-mini': { inputPerMillion: 0.15, outputPerMillion: 0.6 },
  'gpt-4.1': { inputPerMillion: 2, outputPerMillion: 8 },
  'gpt-4.1-mini': { inputPerMillion: 0.4, outputPerMillion: 1.6 },
  'gpt-4.1-nano': { inputPerMillion: 0.1, outputPerMillion: 0.4 },
  o3: { inputPerMillion: 2, outputPerMillion: 8 },
  'o4-mini': { inputPerMillion: 1.1, outputPerMillion: 4.4 },
  'claude-3-5-haiku': { inputPerMillion: 0.8, outputPerMillion: 4 },
  'claude-haiku-4-5': { inputPerMillion: 1, outputPerMillion: 5 },
  'claude-3-5-sonnet': { inputPerMillion: 3, outputPerMillion: 15 },
  'claude-3-7-sonnet': { inputPerMillion: 3, outputPerMillion: 15 },
  'claude-sonnet-4': { inputPerMillion: 3, outputPerMillion: 15 },
  'claude-opus-4': { inputPerMillion: 15, outputPerMillion: 75 },
};

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

/** Cost in USD rounded to 1e-6; null when the price is unknown. */
export function costOf(
  inputTokens: number,
  outputTokens: number,
  price: Price | null,
): number | null {
  if (!price) return null;
  const cost = (inputTokens * price.inputPerMillion + outputTokens * price.outputPerMillion) / 1e6;
  return Math.round(cost * 1e6) / 1e6;
}
