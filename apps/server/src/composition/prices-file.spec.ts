import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { LlmSettings } from '../config';
import { ConfigError } from '../config';
import { loadLlmSettings } from './runtime';

const base: LlmSettings = {
  provider: null,
  model: null,
  openaiApiKey: null,
  anthropicApiKey: null,
  openaiCompatibleBaseUrl: null,
  openaiCompatibleApiKey: null,
  providersFile: null,
  pricesFile: null,
};

describe('COGNITION_PRICES_FILE at startup', () => {
  let dir: string;
  beforeAll(() => {
    dir = mkdtempSync(join(tmpdir(), 'cognition-prices-'));
  });
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it('loads the prices into the LLM configuration', async () => {
    const file = join(dir, 'prices.json');
    writeFileSync(
      file,
      JSON.stringify({
        as_of: '2026-11-01',
        prices: { openai: { 'gpt-4o': { input: 2, output: 8 } } },
      }),
    );
    const { config } = await loadLlmSettings({ ...base, pricesFile: file });
    expect(config.pricesAsOf).toBe('2026-11-01');
    expect(config.providerPrices).toEqual({
      openai: { 'gpt-4o': { inputPerMillion: 2, outputPerMillion: 8 } },
    });
  });

  it('refuses to start with an invalid or unreadable file, naming the variable and the field', async () => {
    const file = join(dir, 'bad.yaml');
    writeFileSync(file, 'prices:\n  openai:\n    gpt-4o: { input: "cheap", output: 8 }\n');
    const bad = await loadLlmSettings({ ...base, pricesFile: file }).catch((e: unknown) => e);
    expect(bad).toBeInstanceOf(ConfigError);
    expect((bad as ConfigError).problems.join('\n')).toContain(
      'COGNITION_PRICES_FILE: prices.openai.gpt-4o.input',
    );
    const missing = await loadLlmSettings({ ...base, pricesFile: join(dir, 'nope.json') }).catch(
      (e: unknown) => e,
    );
    expect((missing as ConfigError).problems[0]).toMatch(/^COGNITION_PRICES_FILE: cannot read/);
  });
});
