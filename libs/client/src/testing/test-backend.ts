import type { TestApiServer } from '@cognition/api/testing';
import { startTestApiServer } from '@cognition/api/testing';
import {
  AgentRegistry,
  ContextInspector,
  createScheduling,
  InMemoryEventLog,
  ProviderRegistry,
  RegistryService,
  RunManager,
  silentLogger,
} from '@cognition/runtime';
import { FakeExecutionBackendFactory, ScriptedChatModel } from '@cognition/runtime/testing';
import type { StorageBackend } from '@cognition/storage';
// The round trips need a real backend and runtime behind the test server; the client itself
// never depends on either.
import { createMemoryStorage } from '@cognition/storage-memory';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

/** A custom agent that asks a person before it executes a command (human in the loop). */
const GATED_AGENT = {
  name: 'gated',
  description: 'Executes only what a person approves.',
  mode: 'primary' as const,
  tools: ['execute' as const],
  model: null,
  temperature: null,
  systemPrompt: 'Ask first.',
  interruptOn: { execute: ['approve' as const, 'reject' as const] },
  mcpServers: [],
  skills: null,
  source: 'test',
};

export interface TestBackend {
  storage: StorageBackend;
  runs: RunManager;
  context: ContextInspector;
  /** Every run's model: push a scripted reply before each send. */
  model: ScriptedChatModel;
  cleanup(): Promise<void>;
}

/** Memory storage plus a real RunManager on a scripted model and a fake sandbox. */
export async function createTestBackend(): Promise<TestBackend> {
  const storage = createMemoryStorage();
  await storage.initialize();
  const workspace = await mkdtemp(join(tmpdir(), 'cognition-client-'));
  const model = new ScriptedChatModel();
  const agents = new AgentRegistry([GATED_AGENT]);
  const providers = new ProviderRegistry({
    providers: [
      {
        id: 'fake',
        kind: 'openai_compatible',
        model: 'fake-model',
        baseUrl: 'http://127.0.0.1:9/v1',
        maxRetries: 0,
      },
    ],
  });
  const runs = new RunManager({
    storage,
    sandbox: new FakeExecutionBackendFactory(),
    agents,
    providers,
    eventLog: new InMemoryEventLog(),
    workspaceRoot: workspace,
    chatModelFactory: () => model,
  });
  return {
    storage,
    runs,
    context: new ContextInspector({ storage, agents, providers }),
    model,
    async cleanup() {
      await runs.shutdown(1000);
      await storage.close();
      await rm(workspace, { recursive: true, force: true });
    },
  };
}

/** The API over `backend` on a loopback port, with scoping by `user` and one accepted key. */
export function startScopedApiServer(
  backend: TestBackend,
  apiKey: { id: string; key: string },
): Promise<TestApiServer> {
  return startTestApiServer({
    storage: backend.storage,
    runs: backend.runs,
    context: backend.context,
    registry: new RegistryService(backend.runs.registry, backend.storage.registry),
    // The loop is not started: specs fire schedules with `schedules.trigger`.
    schedules: createScheduling({
      storage: backend.storage,
      runs: backend.runs,
      nodeId: 'client-test',
      logger: silentLogger,
      allowPrivateCallbacks: true,
    }).service,
    auth: { scoping: { enabled: true, keys: ['user'] }, apiKeys: [apiKey] },
  });
}
