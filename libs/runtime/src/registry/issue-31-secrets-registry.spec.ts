import { randomBytes } from 'node:crypto';
import { createMemoryStorage } from '@cognition/storage-memory';
import { AgentRegistry } from '../agents/registry';
import { ProviderRegistry } from '../providers/registry';
import { SecretCipher } from '../secrets/secret-cipher';
import { FAKE_PROVIDERS } from '../testing/test-runtime';
import { ConfigRegistry } from './config-registry';
import { reencryptRegistry, SecretRegistryStore } from './registry-secrets';
import { RegistryService } from './registry-service';

const SECRETS = ['sk-provider-secret-1', 'env-secret-2', 'Bearer header-secret-3'];
const AGENT = {
  name: 'tooled',
  description: 'Uses MCP',
  system_prompt: 'One.',
  mcp_servers: [
    { name: 'notes', command: 'node', args: ['s.js'], env: { NOTES_TOKEN: SECRETS[1] } },
    { name: 'search', url: 'https://mcp.example.com/mcp', headers: { Authorization: SECRETS[2] } },
  ],
};
const PROVIDER = {
  id: 'vllm',
  kind: 'openai_compatible',
  model: 'llama',
  baseUrl: 'http://vllm.internal:8000/v1',
  apiKey: SECRETS[0],
};

describe('registry secrets at rest (issue 31)', () => {
  const key = (id: string) => ({ id, key: randomBytes(32) });
  let storage: ReturnType<typeof createMemoryStorage>;
  beforeEach(() => {
    storage = createMemoryStorage();
    return storage.initialize();
  });
  afterEach(() => storage.close());

  function service(cipher: SecretCipher) {
    const store = new SecretRegistryStore(storage.registry, cipher);
    const registry = new ConfigRegistry({
      agents: new AgentRegistry(),
      providers: new ProviderRegistry(FAKE_PROVIDERS),
      store,
    });
    return { store, registry, api: new RegistryService(registry, store) };
  }
  const raw = async () => JSON.stringify(await storage.registry.list());

  it('stores only ciphertext, answers no secret value and runs see the plain values', async () => {
    const { api, registry } = service(new SecretCipher({ current: key('k1') }));
    const provider = await api.createProvider(PROVIDER);
    const agent = await api.createAgent(AGENT);
    const stored = await raw();
    for (const secret of SECRETS) {
      expect(stored).not.toContain(secret);
      expect(JSON.stringify([provider, agent, await api.listAgents()])).not.toContain(secret);
    }
    expect(stored).toContain('enc:v1:k1:');
    expect(provider.apiKeySet).toBe(true);
    expect(agent.mcp_servers).toEqual([
      { name: 'notes', command: 'node', args: ['s.js'], env_set: true, env_names: ['NOTES_TOKEN'] },
      {
        name: 'search',
        url: 'https://mcp.example.com/mcp',
        allow_private: false,
        headers_set: true,
        header_names: ['Authorization'],
      },
    ]);
    const snapshot = await registry.current();
    expect(snapshot.providers.get('vllm')?.apiKey).toBe(SECRETS[0]);
    expect(snapshot.agents.get('tooled')?.mcpServers).toMatchObject([
      { env: { NOTES_TOKEN: SECRETS[1] } },
      { headers: { Authorization: SECRETS[2] } },
    ]);
  });

  it('binds each secret to its entry: a ciphertext copied into another entry does not decrypt', async () => {
    const { api, store } = service(new SecretCipher({ current: key('k1') }));
    await api.createProvider(PROVIDER);
    await api.createProvider({ ...PROVIDER, id: 'other', apiKey: 'sk-other' });
    const stolen = (await storage.registry.get('provider', 'vllm'))?.data['apiKey'];
    const target = await storage.registry.get('provider', 'other');
    await storage.registry.put({
      kind: 'provider',
      name: 'other',
      data: { ...target?.data, apiKey: stolen },
      expectedVersion: target?.version,
    });
    await expect(store.get('provider', 'other')).rejects.toMatchObject({ code: 'STORAGE_ERROR' });
    expect((await store.get('provider', 'vllm'))?.data['apiKey']).toBe(SECRETS[0]);
  });

  it('keeps stored env/headers when a write leaves them out; null or {} removes them', async () => {
    const { api, registry } = service(new SecretCipher({ current: key('k1') }));
    await api.createAgent(AGENT);
    const servers = AGENT.mcp_servers.map(({ name, ...rest }) => {
      const { env: _env, headers: _headers, ...kept } = rest as Record<string, unknown>;
      return { name, ...kept };
    });
    const { name: _name, ...definition } = AGENT;
    await api.putAgent('tooled', { definition: { ...definition, mcp_servers: servers } });
    expect((await registry.current()).agents.get('tooled')?.mcpServers).toMatchObject([
      { env: { NOTES_TOKEN: SECRETS[1] } },
      { headers: { Authorization: SECRETS[2] } },
    ]);
    const cleared = await api.putAgent('tooled', {
      definition: {
        ...definition,
        mcp_servers: [
          { ...servers[0], env: null },
          { ...servers[1], headers: {} },
        ],
      },
    });
    expect(cleared.mcp_servers).toMatchObject([
      { env_set: false, env_names: [] },
      { headers_set: false, header_names: [] },
    ]);
  });

  it('refuses to store a secret without a key (503 naming the setting); writes without one pass', async () => {
    const { api } = service(
      new SecretCipher({ current: null, missingKey: 'set COGNITION_SECRETS_KEY' }),
    );
    await expect(api.createProvider(PROVIDER)).rejects.toMatchObject({ code: 'UNAVAILABLE' });
    await expect(api.createProvider(PROVIDER)).rejects.toThrow('COGNITION_SECRETS_KEY');
    expect(await storage.registry.list()).toEqual([]);
    const { apiKey: _key, ...keyless } = PROVIDER;
    await expect(api.createProvider(keyless)).resolves.toMatchObject({ apiKeySet: false });
  });

  it('re-encrypts clear-text and old-key values under the current key; old values stay readable meanwhile', async () => {
    const k1 = key('k1');
    const k2 = key('k2');
    await service(new SecretCipher({ current: k1 })).api.createAgent(AGENT);
    // A provider written before encryption existed: its key in clear.
    await storage.registry.put({
      kind: 'provider',
      name: 'legacy',
      data: { ...PROVIDER, apiKey: 'legacy-clear-key' },
    });
    const next = new SecretCipher({ current: k2, old: [k1] });
    const { registry } = service(next);
    expect((await registry.current()).providers.get('legacy')?.apiKey).toBe('legacy-clear-key');
    expect((await registry.current()).agents.get('tooled')).toBeDefined();

    const result = await reencryptRegistry(storage.registry, next);
    expect(result.rewritten.map((e) => [e.kind, e.name, e.secrets])).toEqual([
      ['agent', 'tooled', 2],
      ['provider', 'legacy', 1],
    ]);
    expect(result.failed).toEqual([]);
    const stored = await raw();
    expect(stored).not.toContain('legacy-clear-key');
    expect(stored).not.toContain('enc:v1:k1:');
    // Rotated: the old key is no longer needed.
    const only = service(new SecretCipher({ current: k2 })).registry;
    expect((await only.current()).providers.get('legacy')?.apiKey).toBe('legacy-clear-key');
    expect((await only.current()).agents.get('tooled')?.mcpServers[0]).toMatchObject({
      env: { NOTES_TOKEN: SECRETS[1] },
    });
    expect((await reencryptRegistry(storage.registry, next)).rewritten).toEqual([]);
  });

  it('leaves out (and does not crash on) an entry whose key is no longer configured', async () => {
    await service(new SecretCipher({ current: key('gone') })).api.createProvider(PROVIDER);
    const { registry, store } = service(new SecretCipher({ current: key('k2') }));
    expect((await registry.current()).providers.get('vllm')).toBeUndefined();
    await expect(store.get('provider', 'vllm')).rejects.toMatchObject({ code: 'UNAVAILABLE' });
    await expect(store.get('provider', 'vllm')).rejects.toThrow('COGNITION_SECRETS_OLD_KEYS');
    const result = await reencryptRegistry(
      storage.registry,
      new SecretCipher({ current: key('k3') }),
    );
    expect(result.failed.map((f) => f.name)).toEqual(['vllm']);
  });
});
