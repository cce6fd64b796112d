import { toFieldIssues } from '@cognition/contracts';
import { parse as parseYaml } from 'yaml';
import { z } from 'zod';
import { RuntimeError } from '../errors';
import type { Price } from './pricing';

const PerMillion = z.number().min(0).max(1_000_000);

/** One price in the file: USD per million tokens. */
const FilePriceSchema = z.strictObject({
  input: PerMillion,
  output: PerMillion,
  /** Input served from the prompt cache, where the provider prices it apart. */
  cached_input: PerMillion.optional(),
});

/**
 * `COGNITION_PRICES_FILE` (JSON or YAML):
 * ```yaml
 * as_of: "2026-11-01"        # optional: when these prices were checked
 * prices:
 *   openai:                  # a provider id or kind; "*" applies to any provider
 *     gpt-4o: { input: 2.5, output: 10, cached_input: 1.25 }
 *   local:
 *     llama3.1: { input: 0, output: 0 }
 * ```
 */
export const PricesFileSchema = z.strictObject({
  as_of: z.string().min(1).max(64).optional(),
  prices: z.record(
    z.string().min(1).max(64),
    z.record(z.string().min(1).max(256), FilePriceSchema),
  ),
});

export const PRICES_FILE_ENV = 'COGNITION_PRICES_FILE';

/** The prices of a prices file, by provider then model, plus its date. */
export interface ParsedPrices {
  asOf: string | null;
  prices: Record<string, Record<string, Price>>;
}

/**
 * Parses and validates a prices file.
 * @throws RuntimeError PROVIDER_CONFIG_ERROR naming `COGNITION_PRICES_FILE` and each bad field
 * (e.g. `prices.openai.gpt-4o.input`).
 */
export function parsePricesFile(file: { path: string; content: string }): ParsedPrices {
  const fail = (issues: { path: string; message: string }[]): RuntimeError => {
    const named = issues.map((issue) => ({
      path: `${PRICES_FILE_ENV}: ${issue.path}`,
      message: issue.message,
    }));
    return new RuntimeError(
      'PROVIDER_CONFIG_ERROR',
      `Invalid prices file ${file.path}: ${issues.map((i) => `${i.path}: ${i.message}`).join('; ')}`,
      { issues: named },
    );
  };
  let value: unknown;
  try {
    value = parseYaml(file.content) as unknown;
  } catch (error) {
    throw fail([{ path: '(file)', message: (error as Error).message }]);
  }
  const parsed = PricesFileSchema.safeParse(value ?? {});
  if (!parsed.success) throw fail(toFieldIssues(parsed.error));
  const prices: Record<string, Record<string, Price>> = {};
  for (const [provider, models] of Object.entries(parsed.data.prices)) {
    prices[provider] = Object.fromEntries(
      Object.entries(models).map(([model, price]) => [
        model,
        {
          inputPerMillion: price.input,
          outputPerMillion: price.output,
          ...(price.cached_input !== undefined
            ? { cachedInputPerMillion: price.cached_input }
            : {}),
        },
      ]),
    );
  }
  return { asOf: parsed.data.as_of ?? null, prices };
}
