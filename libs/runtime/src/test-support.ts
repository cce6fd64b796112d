// Shared set-up of the runtime's own specs (not part of the public surface).
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { AgentEventEnvelope, Session, SessionConfig } from '@cognition/contracts';
import type { StorageBackend } from '@cognition/storage';
import { createMemoryStorage } from '@cognition/storage-memory';
import type { AgentDefinition } from './agents/agent';
import { AgentRegistry } from './agents/registry';
import type { CallbackOptions } from './callbacks/callback-dispatcher';
import { InMemoryEventLog } from './events/event-log';
import type { LlmConfigInput } from './providers/config';
import type { ChatModelFactory } from './providers/chat-model';
import { ProviderRegistry } from './providers/registry';
import type { RunManagerOptions } from './runs/run-manager';
import { RunManager } from './runs/run-manager';
import type { FakeCommandHandler } from './testing/fake-execution-backend';
import { FakeExecutionBackendFactory } from './testing/fake-execution-backend';
import type { ScriptedChatModel } from './testing/scripted-chat-model';

export interface TestRuntimeOptions {
  chatModel?: ScriptedChatModel;
  chatModelFactory?: ChatModelFactory;
  providers?: LlmConfigInput;
  agents?: AgentDefinition[];
  onExecute?: FakeCommandHandler;
  callbacks?: CallbackOptions;
  bufferSize?: number;
  extra?: Partial<RunManagerOptions>;
}

export const FAKE_PROVIDERS: LlmConfigInput = {
  providers: [
    {
      id: 'fake',
      kind: 'openai_compatible',
      model: 'fake-model',
      baseUrl: 'http://127.0.0.1:9/v1',
      maxRetries: 0,
    },
  ],
};

export interface TestRuntime {
  runs: RunManager;
  storage: StorageBackend;
  log: InMemoryEventLog;
  sandbox: FakeExecutionBackendFactory;
  agents: AgentRegistry;
  providers: ProviderRegistry;
  workspace: string;
  createSession(
    agentName?: string,
    config?: SessionConfig,
    scope?: Record<string, string>,
  ): Promise<Session>;
  cleanup(): Promise<void>;
}

export async function createTestRuntime(options: TestRuntimeOptions = {}): Promise<TestRuntime> {
  const workspace = await mkdtemp(join(tmpdir(), 'cognition-runtime-'));
  const storage = createMemoryStorage();
  await storage.initialize();
  const log = new InMemoryEventLog({ bufferSize: options.bufferSize ?? 1000 });
  const sandbox = new FakeExecutionBackendFactory(options.onExecute);
  const agents = new AgentRegistry(options.agents ?? []);
  const providers = new ProviderRegistry(options.providers ?? FAKE_PROVIDERS);
  const chatModel = options.chatModel;
  const runs = new RunManager({
    storage,
    sandbox,
    agents,
    providers,
    eventLog: log,
    workspaceRoot: workspace,
    chatModelFactory: options.chatModelFactory ?? (chatModel ? () => chatModel : undefined),
    callbacks: options.callbacks,
    ...options.extra,
  });
  return {
    runs,
    storage,
    log,
    sandbox,
    agents,
    providers,
    workspace,
    createSession: (agentName = 'default', config = {}, scope = {}) =>
      storage.sessions.create({ agentName, config }, scope),
    async cleanup() {
      await runs.shutdown(1000);
      await storage.close();
      await rm(workspace, { recursive: true, force: true });
    },
  };
}

/** Every envelope of the stream until it ends. */
export async function collect(
  stream: AsyncIterable<AgentEventEnvelope>,
): Promise<AgentEventEnvelope[]> {
  const out: AgentEventEnvelope[] = [];
  for await (const envelope of stream) out.push(envelope);
  return out;
}

/** Sends a message and collects the run's events to its terminal event. */
export async function sendAndCollect(
  rt: TestRuntime,
  session: Session,
  content: string,
  extra: { callbackUrl?: string; idempotencyKey?: string } = {},
) {
  const result = await rt.runs.send({ sessionId: session.id, scope: {}, content, ...extra });
  const events = await collect(await rt.runs.events(session.id, {}, { runId: result.run.id }));
  return { ...result, events, types: events.map((e) => e.event.type) };
}

export async function waitFor(
  predicate: () => boolean | Promise<boolean>,
  timeoutMs = 5000,
): Promise<void> {
  const started = Date.now();
  while (!(await predicate())) {
    if (Date.now() - started > timeoutMs) throw new Error('waitFor timed out');
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
}

/** The error `fn` throws (fails the test when it does not throw). */
export function thrownBy(fn: () => unknown): unknown {
  try {
    fn();
  } catch (error) {
    return error;
  }
  throw new Error('expected the call to throw');
}

/** Jest's asymmetric matchers, typed `unknown` rather than `any` for the type-checked lint. */
export const match = {
  anyString: (): unknown => expect.any(String),
  containing: (text: string): unknown => expect.stringContaining(text),
  matching: (pattern: RegExp): unknown => expect.stringMatching(pattern),
  arrayContaining: (items: unknown[]): unknown => expect.arrayContaining(items),
  objectContaining: (shape: object): unknown => expect.objectContaining(shape),
};
