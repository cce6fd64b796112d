import { RuntimeError } from '../errors';
import { resolveLlmConfig } from './config';
import { parsePricesFile } from './prices-file';
import { DEFAULT_PRICES_AS_OF, DEFAULT_PROVIDER_PRICES, priceOf } from './pricing';
import { ProviderRegistry } from './registry';
import { UsageMeter } from './usage';

describe('priceOf', () => {
  it('prices input, cached input and output per million tokens, from the built-in table', () => {
    expect(DEFAULT_PRICES_AS_OF).toMatch(/^\d{4}-\d{2}-\d{2}$/);
    expect(
      priceOf({ provider: 'openai', model: 'gpt-4o', tokensIn: 1_000_000, tokensOut: 1_000_000 }),
    ).toEqual({ costUsd: 12.5 });
    // 400k of the million input tokens came from the cache (1.25 instead of 2.5 per million).
    expect(
      priceOf({
        provider: 'openai',
        model: 'gpt-4o-2024-08-06',
        tokensIn: 1_000_000,
        tokensOut: 0,
        cachedIn: 400_000,
      }),
    ).toEqual({ costUsd: 2 });
    expect(
      priceOf({
        provider: 'anthropic',
        model: 'claude-sonnet-4-20250514',
        tokensIn: 1000,
        tokensOut: 1000,
      }),
    ).toEqual({ costUsd: 0.018 });
  });

  it('reports an unknown price as unknown, never as zero', () => {
    expect(priceOf({ provider: 'local', model: 'llama3.1', tokensIn: 10, tokensOut: 10 })).toEqual({
      unknown: true,
    });
    expect(
      priceOf(
        { provider: 'anthropic', model: 'gpt-4o', tokensIn: 1, tokensOut: 1 },
        { anthropic: {} },
      ),
    ).toEqual({ unknown: true });
  });
});

describe('COGNITION_PRICES_FILE', () => {
  it('reads JSON or YAML per provider/model and overrides and extends the built-in prices', () => {
    const yaml = parsePricesFile({
      path: 'prices.yaml',
      content: [
        'as_of: "2026-11-01"',
        'prices:',
        '  openai:',
        '    gpt-4o: { input: 2, output: 8, cached_input: 1 }',
        '  local:',
        '    llama3.1: { input: 0.1, output: 0.2 }',
      ].join('\n'),
    });
    expect(yaml.asOf).toBe('2026-11-01');
    const json = parsePricesFile({
      path: 'prices.json',
      content: JSON.stringify({ prices: { '*': { 'my-model': { input: 1, output: 1 } } } }),
    });
    expect(json).toEqual({
      asOf: null,
      prices: { '*': { 'my-model': { inputPerMillion: 1, outputPerMillion: 1 } } },
    });
    const { config } = resolveLlmConfig({
      pricesFile: {
        path: 'prices.yaml',
        content:
          'prices:\n  openai:\n    gpt-4o: { input: 2, output: 8 }\n  local:\n    llama3.1: { input: 0.1, output: 0.2 }\n',
      },
    });
    const registry = new ProviderRegistry(config);
    expect(registry.price('gpt-4o', { id: 'openai', kind: 'openai' })).toEqual({
      inputPerMillion: 2,
      outputPerMillion: 8,
    });
    expect(registry.price('llama3.1', { id: 'local', kind: 'openai_compatible' })).toEqual({
      inputPerMillion: 0.1,
      outputPerMillion: 0.2,
    });
    // Another provider serving llama3.1 has no price; built-ins stay for the rest.
    expect(registry.price('llama3.1', { id: 'other', kind: 'openai_compatible' })).toBeNull();
    expect(registry.price('claude-opus-4', { id: 'anthropic', kind: 'anthropic' })).toEqual(
      DEFAULT_PROVIDER_PRICES.anthropic?.['claude-opus-4'],
    );
    expect(
      priceOf(
        { provider: 'local', model: 'llama3.1', tokensIn: 1_000_000, tokensOut: 1_000_000 },
        registry.priceTable(),
      ),
    ).toEqual({ costUsd: 0.3 });
  });

  it('fails at startup naming the variable and each bad field', () => {
    const attempt = (content: string) => () => parsePricesFile({ path: 'p.yaml', content });
    for (const [content, field] of [
      ['prices:\n  openai:\n    gpt-4o: { input: -1, output: 1 }', 'prices.openai.gpt-4o.input'],
      ['prices:\n  openai:\n    gpt-4o: { input: 1 }', 'prices.openai.gpt-4o.output'],
      ['prices:\n  openai:\n    gpt-4o: { input: 1, output: 1, typo: 2 }', 'prices.openai.gpt-4o'],
      ['pricez: {}', '(root)'],
      ['prices: [', '(file)'],
    ] as const) {
      let caught: unknown;
      try {
        attempt(content)();
      } catch (error) {
        caught = error;
      }
      expect(caught).toBeInstanceOf(RuntimeError);
      expect((caught as RuntimeError).code).toBe('PROVIDER_CONFIG_ERROR');
      const paths = ((caught as RuntimeError).details.issues ?? []).map((i) => i.path);
      expect(paths.some((p) => p.startsWith(`COGNITION_PRICES_FILE: ${field}`))).toBe(true);
    }
  });
});

describe('UsageMeter per model', () => {
  it('attributes nested meters (subagents, summaries) to their own model and price', () => {
    const main = new UsageMeter('openai', 'gpt-4o', { inputPerMillion: 2.5, outputPerMillion: 10 });
    const sub = new UsageMeter('anthropic', 'claude-haiku-4-5', null);
    const again = new UsageMeter('openai', 'gpt-4o', {
      inputPerMillion: 2.5,
      outputPerMillion: 10,
    });
    main.addNested(sub);
    main.addNested(again);
    main.add({ input_tokens: 1000, output_tokens: 100 }, () => ({ input: 0, output: 0 }));
    sub.add(undefined, () => ({ input: 40, output: 8 }));
    again.add({ input_tokens: 1000, output_tokens: 100 }, () => ({ input: 0, output: 0 }));
    const usage = main.toUsage();
    expect(usage).toMatchObject({
      inputTokens: 2040,
      outputTokens: 208,
      costUsd: null,
      estimated: true,
    });
    expect(usage.models).toEqual([
      {
        provider: 'openai',
        model: 'gpt-4o',
        calls: 2,
        inputTokens: 2000,
        outputTokens: 200,
        cachedInputTokens: 0,
        costUsd: 0.007,
        estimated: false,
      },
      {
        provider: 'anthropic',
        model: 'claude-haiku-4-5',
        calls: 1,
        inputTokens: 40,
        outputTokens: 8,
        cachedInputTokens: 0,
        costUsd: null,
        estimated: true,
      },
    ]);
  });
});
