import type { ProviderView } from '@cognition/contracts';
import { describe, expect, it } from 'vitest';
import { providerDocument } from './provider-form';

const stored: ProviderView = {
  id: 'local',
  kind: 'openai_compatible',
  model: 'small',
  models: ['small', 'large'],
  baseUrl: 'http://127.0.0.1:9/v1',
  priority: 500,
  enabled: true,
  temperature: null,
  maxTokens: 2048,
  maxRetries: 4,
  timeoutMs: 30_000,
  apiKeySet: true,
  source: 'api',
  readOnly: false,
  version: 2,
  createdAt: null,
  updatedAt: null,
};

const values = {
  id: 'local',
  kind: 'openai_compatible',
  model: 'small',
  models: 'large, huge',
  baseUrl: 'http://127.0.0.1:9/v1',
  apiKey: '',
  priority: '500',
  enabled: false,
};

describe('providerDocument', () => {
  it('carries over the settings the form does not show and leaves an empty key out (kept)', () => {
    expect(providerDocument(values, stored)).toEqual({
      id: 'local',
      kind: 'openai_compatible',
      model: 'small',
      models: ['large', 'huge'],
      baseUrl: 'http://127.0.0.1:9/v1',
      priority: 500,
      enabled: false,
      maxTokens: 2048,
      maxRetries: 4,
      timeoutMs: 30_000,
    });
  });

  it('sends a key typed in, and a priority that is no integer as typed, for the server to refuse', () => {
    const doc = providerDocument({ ...values, apiKey: 'sk-1', priority: 'high', models: '' }, null);
    expect(doc).toEqual({
      id: 'local',
      kind: 'openai_compatible',
      model: 'small',
      baseUrl: 'http://127.0.0.1:9/v1',
      apiKey: 'sk-1',
      priority: 'high',
      enabled: false,
    });
  });
});
