// Shared set-up of the runtime's own specs (not part of the public surface).
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type {
  AgentEventEnvelope,
  ContextSettingsInput,
  Session,
  SessionConfig,
} from '@cognition/contracts';
import { ContextSettingsSchema } from '@cognition/contracts';
import type { StorageBackend } from '@cognition/storage';
import { createMemoryStorage } from '@cognition/storage-memory';
import type { AgentDefinition } from '../agents/agent';
import { AgentRegistry } from '../agents/registry';
import type { CallbackOptions } from '../callbacks/callback-dispatcher';
import { InMemoryEventLog } from '../events/event-log';
import type { LlmConfigInput } from '../providers/config';
import type { ChatModelFactory } from '../providers/chat-model';
import { ProviderRegistry } from '../providers/registry';
import type { RunManagerOptions } from '../runs/run-manager-options';
import { RunManager } from '../runs/run-manager';
import type { FakeCommandHandler } from './fake-execution-backend';
import { FakeExecutionBackendFactory } from './fake-execution-backend';
import type { ScriptedCall, ScriptedChatModel } from './scripted-chat-model';
import { SUMMARIZER_PROMPT } from '../context/summarizer';
import type { TokenCounter } from '../context/token-counter';
import type { BaseMessage } from '@langchain/core/messages';

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

/**
 * Another `RunManager` on the same storage, sandbox, agents and event log as `rt`: the next
 * process after a crash, or a second node of a cluster.
 */
export function anotherManager(
  rt: TestRuntime,
  model: ScriptedChatModel,
  options: Partial<RunManagerOptions> = {},
): RunManager {
  return new RunManager({
    storage: rt.storage,
    sandbox: rt.sandbox,
    agents: rt.agents,
    providers: rt.providers,
    eventLog: rt.log,
    workspaceRoot: rt.workspace,
    chatModelFactory: () => model,
    ...options,
  });
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
  const result = await rt.runs.scheduler.send({
    sessionId: session.id,
    scope: {},
    content,
    ...extra,
  });
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

/** A primary agent with the given context settings and tools (context specs). */
export function contextAgent(
  context: ContextSettingsInput,
  tools: AgentDefinition['tools'] = [],
  name = 'long',
): AgentDefinition {
  return {
    name,
    description: 'Holds long conversations.',
    mode: 'primary',
    tools,
    model: null,
    temperature: null,
    systemPrompt: 'You are a patient assistant.',
    context: ContextSettingsSchema.parse(context),
    interruptOn: {},
    mcpServers: [],
    skills: null,
    source: 'test',
  };
}

/** Whether a scripted model call was a summary call (the summarizer's system prompt first). */
export function isSummaryCall(call: ScriptedCall): boolean {
  return call.messages[0]?.content === SUMMARIZER_PROMPT;
}

/** Tokens a scripted model call was sent, counted as the runtime counts them. */
export function sentTokens(call: ScriptedCall, counter: TokenCounter, tools: number): number {
  return call.messages.reduce((sum, m) => sum + counter.message(m), 0) + tools;
}

/** A message's content when it is a plain string ('' otherwise). */
export function contentText(message: BaseMessage | undefined): string {
  return typeof message?.content === 'string' ? message.content : '';
}
