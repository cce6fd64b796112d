import type { AgentEventEnvelope } from '@cognition/contracts';
import {
  AgentRegistry,
  ContextInspector,
  createScheduling,
  InMemoryEventLog,
  ProviderRegistry,
  RegistryService,
  RunManager,
  SessionService,
  SkillLibrary,
  silentLogger,
} from '@cognition/runtime';
import type { AgentDefinition } from '@cognition/runtime';
import { FakeExecutionBackendFactory, ScriptedChatModel } from '@cognition/runtime/testing';
import type { Scope, StorageBackend } from '@cognition/storage';
// Procedure tests run on the real in-process backend and a real RunManager (scripted model, fake
// sandbox); production code never imports an implementation (only apps/server picks one).
import { createMemoryStorage } from '@cognition/storage-memory';
import { TRPCError } from '@trpc/server';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createCaller } from '../caller';
import type { ApiServices, BreakerSnapshot } from '../context';
import { createApiContext } from '../context';

/** A primary agent besides the built-ins, and a subagent (which sessions may not bind to). */
export const TEST_AGENTS: AgentDefinition[] = [
  {
    name: 'researcher',
    description: 'Reads and summarises.',
    mode: 'primary',
    tools: ['ls', 'read_file'],
    model: null,
    temperature: null,
    systemPrompt: 'Research.',
    interruptOn: {},
    mcpServers: [],
    skills: null,
    source: 'test',
  },
  {
    name: 'helper',
    description: 'Only reachable through the task tool.',
    mode: 'subagent',
    tools: ['ls'],
    model: null,
    temperature: null,
    systemPrompt: 'Help.',
    interruptOn: {},
    mcpServers: [],
    skills: null,
    source: 'test',
  },
];

/** One enabled provider (never contacted: the scripted model answers) serving these models. */
export const TEST_PROVIDER_ID = 'fake';
export const TEST_MODELS = ['fake-model', 'gpt-4o'];

export interface ApiTestBed {
  storage: StorageBackend;
  services: ApiServices;
  runs: RunManager;
  sessions: SessionService;
  /** The scripted model every run talks to: `bed.model.push({ text: [...] })` before a send. */
  model: ScriptedChatModel;
  sandbox: FakeExecutionBackendFactory;
  /** The runtime's workspace: sessions' directories, and skills in `.cognition/skills`. */
  workspace: string;
  /** Session ids `services.sandbox.release` was called with. */
  released: string[];
  breakerSnapshots: BreakerSnapshot[];
  /**
   * A caller bound to `scope` (default: the empty scope, i.e. scoping disabled); `admin` may
   * change the registry (default: not).
   */
  as(scope?: Scope, options?: { admin?: boolean }): ReturnType<typeof createCaller>;
  cleanup(): Promise<void>;
}

export async function createApiTestBed(options: { bufferSize?: number } = {}): Promise<ApiTestBed> {
  const storage = createMemoryStorage();
  await storage.initialize();
  const workspace = await mkdtemp(join(tmpdir(), 'cognition-api-'));
  const model = new ScriptedChatModel();
  const sandbox = new FakeExecutionBackendFactory();
  const agents = new AgentRegistry(TEST_AGENTS);
  const providers = new ProviderRegistry({
    providers: [
      {
        id: TEST_PROVIDER_ID,
        kind: 'openai_compatible',
        model: 'fake-model',
        models: TEST_MODELS,
        baseUrl: 'http://127.0.0.1:9/v1',
        maxRetries: 0,
      },
    ],
  });
  const skills = new SkillLibrary({ workspace });
  const runs = new RunManager({
    storage,
    sandbox,
    agents,
    providers,
    eventLog: new InMemoryEventLog({ bufferSize: options.bufferSize ?? 1000 }),
    workspaceRoot: workspace,
    skills,
    chatModelFactory: () => model,
    abortWaitMs: 2000,
    // Callback receivers of these tests listen on loopback, which is refused by default.
    callbacks: { allowPrivateNetwork: true },
  });
  const breakerSnapshots: BreakerSnapshot[] = [];
  const released: string[] = [];
  const sessions = new SessionService({ storage, runs, logger: silentLogger });
  runs.useSessionStatusWriter((id, scope, status, runId) =>
    sessions.applyRunOutcome(id, scope, status, runId),
  );
  // The loop is not started: specs fire schedules with `schedules.trigger`.
  const scheduling = createScheduling({
    storage,
    runs,
    nodeId: 'api-test',
    logger: silentLogger,
    allowPrivateCallbacks: true,
  });
  const services: ApiServices = {
    storage,
    runs,
    sessions,
    schedules: scheduling.service,
    context: new ContextInspector({ storage, agents, providers, skills }),
    skills,
    registry: new RegistryService(runs.registry, storage.registry),
    sandbox: {
      release: (sessionId) => {
        released.push(sessionId);
        return Promise.resolve();
      },
    },
    breakers: { snapshots: () => breakerSnapshots },
    version: '1.2.3-test',
  };
  return {
    storage,
    services,
    runs,
    sessions,
    model,
    sandbox,
    workspace,
    released,
    breakerSnapshots,
    as: (scope = {}, { admin = false } = {}) =>
      createCaller(createApiContext(services, { scope, admin }, 'req-test')),
    async cleanup() {
      await runs.shutdown(1000);
      await storage.close();
      await rm(workspace, { recursive: true, force: true });
    },
  };
}

/** The TRPCError a call rejected with; fails the test when it resolved or threw something else. */
export async function trpcErrorOf(call: Promise<unknown>): Promise<TRPCError> {
  try {
    await call;
  } catch (error) {
    if (error instanceof TRPCError) return error;
    throw new Error(`expected a TRPCError, got ${String(error)}`);
  }
  throw new Error('expected the call to fail, it succeeded');
}

/** Every item of a (subscription) stream until it ends. */
export async function collect<T>(stream: AsyncIterable<T>): Promise<T[]> {
  const out: T[] = [];
  for await (const item of stream) out.push(item);
  return out;
}

/** What `runs.events` yields: tRPC's tracked tuple `[id, envelope, symbol]`. */
export function envelopeOf(tracked: readonly [string, AgentEventEnvelope, ...unknown[]]): {
  id: string;
  envelope: AgentEventEnvelope;
} {
  return { id: tracked[0], envelope: tracked[1] };
}
