import type { LlmConfigInput } from './config';
import { DEFAULT_MODELS, loadLlmConfig, providerFromKeys } from './config';
import { costOf, priceFor, DEFAULT_PRICES } from './pricing';
import { NO_PROVIDER_MESSAGE, ProviderRegistry } from './registry';
import { match, thrownBy } from '../testing/test-runtime';

const agent = { name: 'default', model: null, temperature: null };

describe('loadLlmConfig', () => {
  it('maps the environment variables to a provider with the best priority', () => {
    const config = loadLlmConfig({ provider: 'openai', model: 'gpt-4o', openaiApiKey: 'sk-1' });
    expect(config.providers).toEqual([
      match.objectContaining({
        id: 'openai',
        kind: 'openai',
        model: 'gpt-4o',
        apiKey: 'sk-1',
        priority: 0,
        enabled: true,
      }),
    ]);
  });

  it('names the missing or invalid variables', () => {
    expect(thrownBy(() => loadLlmConfig({ provider: 'anthropic' }))).toMatchObject({
      code: 'PROVIDER_CONFIG_ERROR',
      issues: [
        { path: 'COGNITION_LLM_MODEL', message: match.anyString() },
        { path: 'ANTHROPIC_API_KEY', message: match.anyString() },
      ],
    });
    expect(thrownBy(() => loadLlmConfig({ provider: 'gemini', model: 'x' }))).toMatchObject({
      issues: [match.objectContaining({ path: 'COGNITION_LLM_PROVIDER' })],
    });
    expect(
      thrownBy(() =>
        loadLlmConfig({
          provider: 'openai_compatible',
          model: 'm',
          openaiCompatibleBaseUrl: 'file:///etc',
        }),
      ),
    ).toMatchObject({
      issues: [match.objectContaining({ path: 'COGNITION_OPENAI_COMPATIBLE_BASE_URL' })],
    });
  });

  it('reads a providers file, filling credentials from the environment, with env overriding by id', () => {
    const content = [
      'providers:',
      '  - { id: openai, kind: openai, model: gpt-4o-mini, priority: 5 }',
      '  - { id: local, kind: openai_compatible, model: llama3, models: [qwen], priority: 1 }',
      'prices:',
      '  llama3: { inputPerMillion: 0, outputPerMillion: 0 }',
    ].join('\n');
    const config = loadLlmConfig({
      providersFile: { path: '/etc/cognition/providers.yaml', content },
      openaiApiKey: 'sk-2',
      openaiCompatibleBaseUrl: 'http://localhost:11434/v1',
    });
    expect(config.providers.map((p) => [p.id, p.apiKey, p.baseUrl])).toEqual([
      ['openai', 'sk-2', undefined],
      ['local', undefined, 'http://localhost:11434/v1'],
    ]);
    expect(config.prices.llama3).toEqual({ inputPerMillion: 0, outputPerMillion: 0 });
    const overridden = loadLlmConfig({
      providersFile: {
        path: 'p.json',
        content: JSON.stringify({
          providers: [{ id: 'openai', kind: 'openai', model: 'a', apiKey: 'k' }],
        }),
      },
      provider: 'openai',
      model: 'b',
      openaiApiKey: 'k2',
    });
    expect(overridden.providers.map((p) => [p.id, p.model])).toEqual([['openai', 'b']]);
  });

  it('names the file and the field of an invalid providers file', () => {
    expect(
      thrownBy(() =>
        loadLlmConfig({
          providersFile: {
            path: '/p.yaml',
            content: 'providers:\n  - { id: x, kind: openai, model: m, priority: high }\n',
          },
        }),
      ),
    ).toMatchObject({
      issues: [match.objectContaining({ path: '/p.yaml: providers.0.priority' })],
    });
    expect(
      thrownBy(() =>
        loadLlmConfig({
          providersFile: {
            path: '/p.yaml',
            content: 'providers:\n  - { id: x, kind: openai, model: m }\n',
          },
        }),
      ),
    ).toMatchObject({
      issues: [{ path: '/p.yaml: providers.0.apiKey', message: 'required for openai' }],
    });
    expect(() =>
      loadLlmConfig({ providersFile: { path: '/p.yaml', content: 'providers: {' } }),
    ).toThrow(/\/p\.yaml/);
  });

  it('accepts no provider at all (runs then fail with a how-to)', () => {
    expect(loadLlmConfig({}).providers).toEqual([]);
    expect(() => new ProviderRegistry({}).resolve({}, agent)).toThrow(NO_PROVIDER_MESSAGE);
  });
});

describe("a provider chosen by its API key alone (issue 11: a newcomer's first turn)", () => {
  it('OPENAI_API_KEY alone selects openai with the default model, and says so', () => {
    const config = loadLlmConfig({ openaiApiKey: 'sk-1' });
    expect(config.providers).toEqual([
      expect.objectContaining({ id: 'openai', kind: 'openai', model: DEFAULT_MODELS.openai }),
    ]);
    expect(providerFromKeys({ openaiApiKey: 'sk-1' })?.explanation).toBe(
      'Using openai (default model gpt-4o-mini; COGNITION_LLM_MODEL changes it) because OPENAI_API_KEY is set and COGNITION_LLM_PROVIDER is not.',
    );
  });

  it('ANTHROPIC_API_KEY alone selects anthropic; COGNITION_LLM_MODEL names the model', () => {
    const config = loadLlmConfig({ anthropicApiKey: 'sk-ant', model: 'claude-sonnet-4-5' });
    expect(config.providers).toEqual([
      expect.objectContaining({ kind: 'anthropic', model: 'claude-sonnet-4-5', apiKey: 'sk-ant' }),
    ]);
    expect(providerFromKeys({ anthropicApiKey: 'sk-ant' })).toMatchObject({
      kind: 'anthropic',
      model: DEFAULT_MODELS.anthropic,
    });
  });

  it('both keys: OpenAI is chosen and the explanation names the variable that picks the other', () => {
    const env = { openaiApiKey: 'sk-1', anthropicApiKey: 'sk-ant' };
    expect(loadLlmConfig(env).providers.map((p) => p.kind)).toEqual(['openai']);
    expect(providerFromKeys(env)?.explanation).toContain(
      'ANTHROPIC_API_KEY is set too: with both keys OpenAI is used, COGNITION_LLM_PROVIDER=anthropic picks Anthropic.',
    );
  });

  it('an explicit provider or a providers file wins over the keys', () => {
    const explicit = {
      provider: 'anthropic',
      model: 'claude-sonnet-4',
      openaiApiKey: 'sk-1',
      anthropicApiKey: 'k',
    };
    expect(providerFromKeys(explicit)).toBeNull();
    expect(loadLlmConfig(explicit).providers.map((p) => p.kind)).toEqual(['anthropic']);
    const file = {
      openaiApiKey: 'sk-1',
      providersFile: {
        path: '/p.yaml',
        content:
          'providers: [{id: local, kind: openai_compatible, model: m, baseUrl: "http://127.0.0.1:1/v1"}]',
      },
    };
    expect(loadLlmConfig(file).providers.map((p) => p.id)).toEqual(['local']);
  });

  it('blank keys count as absent', () => {
    expect(providerFromKeys({ openaiApiKey: '  ' })).toBeNull();
    expect(loadLlmConfig({ openaiApiKey: '' }).providers).toEqual([]);
  });
});

describe('ProviderRegistry', () => {
  const config: LlmConfigInput = {
    providers: [
      { id: 'backup', kind: 'openai', model: 'gpt-4o-mini', apiKey: 'k', priority: 20 },
      {
        id: 'main',
        kind: 'anthropic',
        model: 'claude-sonnet-4-5',
        apiKey: 'k',
        priority: 10,
        models: ['claude-3-5-haiku-latest'],
        temperature: 0.5,
      },
      { id: 'off', kind: 'openai', model: 'gpt-4.1', priority: 0, enabled: false },
    ],
  };
  const registry = new ProviderRegistry(config);

  it('defaults to the enabled provider with the best priority', () => {
    expect(registry.defaultProvider()?.id).toBe('main');
    expect(registry.resolve({}, agent)).toMatchObject({
      provider: { id: 'main' },
      model: 'claude-sonnet-4-5',
      temperature: 0.5,
    });
  });

  it('resolves a model to the provider serving it and applies overrides in order', () => {
    expect(
      registry.resolve({ model: 'gpt-4o-mini', temperature: 0.1, maxTokens: 99 }, agent),
    ).toMatchObject({
      provider: { id: 'backup' },
      model: 'gpt-4o-mini',
      temperature: 0.1,
      maxTokens: 99,
    });
    expect(
      registry.resolve({}, { name: 'a', model: 'claude-3-5-haiku-latest', temperature: 0.9 }),
    ).toMatchObject({
      provider: { id: 'main' },
      temperature: 0.9,
    });
    expect(
      thrownBy(() => registry.resolve({}, { name: 'a', model: 'gpt-4.1', temperature: null })),
    ).toMatchObject({
      code: 'PROVIDER_CONFIG_ERROR',
      message: match.containing('agent "a"'),
    });
  });

  it('validates session overrides with the field named', () => {
    expect(thrownBy(() => registry.validateSessionConfig({ providerId: 'nope' }))).toMatchObject({
      code: 'VALIDATION_ERROR',
      issues: [match.objectContaining({ path: 'config.providerId' })],
    });
    expect(() => registry.validateSessionConfig({ providerId: 'off' })).toThrow(/disabled/);
    expect(
      thrownBy(() =>
        registry.validateSessionConfig({ providerId: 'backup', model: 'claude-sonnet-4-5' }),
      ),
    ).toMatchObject({ issues: [match.objectContaining({ path: 'config.model' })] });
    expect(() => registry.validateSessionConfig({ model: 'gpt-4.1' })).toThrow(
      /no enabled provider/,
    );
    expect(() =>
      registry.validateSessionConfig({
        providerId: 'backup',
        model: 'gpt-4o-mini',
        temperature: 1,
      }),
    ).not.toThrow();
  });

  it('never exposes API keys in summaries', () => {
    expect(JSON.stringify(registry.summaries())).not.toContain('"k"');
  });
});

describe('pricing', () => {
  it('matches exact names and dated snapshots, and returns null for unknown models', () => {
    expect(priceFor('gpt-4o', DEFAULT_PRICES)).toEqual(DEFAULT_PRICES['gpt-4o']);
    expect(priceFor('gpt-4o-mini-2024-07-18', DEFAULT_PRICES)).toEqual(
      DEFAULT_PRICES['gpt-4o-mini'],
    );
    expect(priceFor('gpt-4o-2024-08-06', DEFAULT_PRICES)).toEqual(DEFAULT_PRICES['gpt-4o']);
    expect(priceFor('gpt-4omega', DEFAULT_PRICES)).toBeNull();
    expect(priceFor('llama3', DEFAULT_PRICES)).toBeNull();
    expect(costOf(1_000_000, 1_000_000, { inputPerMillion: 3, outputPerMillion: 15 })).toBe(18);
    expect(costOf(10, 10, null)).toBeNull();
  });

  it('lets configuration override and extend the table', () => {
    const registry = new ProviderRegistry({
      prices: {
        'gpt-4o': { inputPerMillion: 1, outputPerMillion: 1 },
        mine: { inputPerMillion: 2, outputPerMillion: 2 },
      },
    });
    expect(registry.price('gpt-4o')).toEqual({ inputPerMillion: 1, outputPerMillion: 1 });
    expect(registry.price('mine')).toEqual({ inputPerMillion: 2, outputPerMillion: 2 });
    expect(registry.price('claude-sonnet-4-20250514')).toEqual(DEFAULT_PRICES['claude-sonnet-4']);
  });
});
