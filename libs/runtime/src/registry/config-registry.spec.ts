import { createMemoryStorage } from '@cognition/storage-memory';
import { AgentRegistry } from '../agents/registry';
import { loadLlmConfig } from '../providers/config';
import { ProviderRegistry } from '../providers/registry';
import { FAKE_PROVIDERS } from '../testing/test-runtime';
import { ConfigRegistry } from './config-registry';
import { RegistryService } from './registry-service';

const AGENT = { description: 'Triage', tools: ['ls'], system_prompt: 'One.' };

describe('ConfigRegistry', () => {
  const storage = createMemoryStorage();
  const node = () =>
    new ConfigRegistry({
      agents: new AgentRegistry(),
      providers: new ProviderRegistry(FAKE_PROVIDERS),
      store: storage.registry,
    });
  beforeAll(() => storage.initialize());
  afterAll(() => storage.close());

  it("lets every node see another node's change at its next read (no invalidation message)", async () => {
    const a = node();
    const b = node();
    const service = new RegistryService(a, storage.registry);
    expect((await b.current()).agents.get('triage')).toBeUndefined();
    const cached = await b.current();
    expect(await b.current()).toBe(cached);

    await service.createAgent({ name: 'triage', ...AGENT });
    expect((await b.current()).agents.get('triage')?.systemPrompt).toBe('One.');
    await service.putAgent('triage', { definition: { ...AGENT, system_prompt: 'Two.' } });
    expect((await b.current()).agents.get('triage')?.systemPrompt).toBe('Two.');
    // Deleted and created again: version 1 again, other content; still seen.
    await service.deleteAgent('triage');
    expect((await b.current()).agents.get('triage')).toBeUndefined();
    await service.createAgent({ name: 'triage', ...AGENT, system_prompt: 'Three.' });
    expect((await b.current()).agents.get('triage')?.systemPrompt).toBe('Three.');
  });

  it('leaves out a stored entry that no longer validates, keeping the others', async () => {
    await storage.registry.put({ kind: 'agent', name: 'broken', data: { tools: ['teleport'] } });
    await storage.registry.put({ kind: 'provider', name: 'half', data: { kind: 'openai' } });
    const snapshot = await node().current();
    expect(snapshot.agents.get('broken')).toBeUndefined();
    expect(snapshot.providers.get('half')).toBeUndefined();
    expect(snapshot.agents.get('default')).toBeDefined();
    expect(snapshot.entries.map((e) => e.name)).not.toContain('broken');
  });

  it('says which provider the environment defined and which the providers file did', async () => {
    const config = loadLlmConfig({
      provider: 'openai',
      model: 'gpt-4o',
      openaiApiKey: 'sk-env',
      providersFile: {
        path: 'providers.yaml',
        content:
          'providers:\n  - { id: local, kind: openai_compatible, model: m, baseUrl: "http://127.0.0.1:9/v1" }\n',
      },
    });
    const registry = new ConfigRegistry({
      agents: new AgentRegistry(),
      providers: new ProviderRegistry(config),
      store: storage.registry,
    });
    const service = new RegistryService(registry, storage.registry);
    const sources = (await service.listProviders()).map((p) => [p.id, p.source]);
    expect(sources).toEqual([
      ['openai', 'environment'],
      ['local', 'file'],
    ]);
    expect((await service.getProvider('openai')).source).toBe('environment');
  });
});
