import { mkdir } from 'node:fs/promises';
import path from 'node:path';
import { CircuitBreakerRegistry } from '@cognition/circuit-breaker';
import type { AgentEvent } from '@cognition/contracts';
import {
  AgentRegistry,
  AgentTurn,
  ProviderRegistry,
  ToolCatalog,
  UsageMeter,
  createAgentGraph,
  createChatModel,
  isProviderOutage,
  loadLlmConfig,
  newRunId,
  toToolDefinition,
} from '@cognition/runtime';
import type { BoundChatModel } from '@cognition/runtime';
import type { FakeOpenAIServer } from '@cognition/runtime/testing/http';
import type { ExecutionBackend } from '@cognition/sandbox';
import { createLocalSandbox } from '@cognition/sandbox-local';
import { HumanMessage } from '@langchain/core/messages';
import { MemorySaver } from '@langchain/langgraph';
import type { TurnShape } from './agent-server';
import { BENCH_MODEL, shapeOf } from './agent-server';

/** As RunManager's default: graph steps per run. */
const MAX_STEPS = 50;

/** One turn of the in-process agent on thread `threadId`: the user message `content`. */
export type InProcessTurn = (threadId: string, content: string) => Promise<TurnShape>;

/**
 * The in-process floor of the agent benchmarks: the graph a RunManager runs for a session of the
 * `default` agent (`AgentTurn` steps in `createAgentGraph`), built the way `RunManager.execute`
 * builds it — the server's provider configuration pointed at `fake`, a fresh chat model bound
 * to the agent's tools per turn, the LLM circuit breaker, the usage meter, the local sandbox on
 * a per-thread workspace under `workspaceRoot` — but checkpointed by one LangGraph `MemorySaver`
 * (so a thread keeps its history across turns) and with events kept in an array instead of
 * storage, the event log and a client connection. No context compactor: the model is sent the
 * whole thread.
 */
export async function createInProcessAgent(
  fake: FakeOpenAIServer,
  workspaceRoot: string,
): Promise<InProcessTurn> {
  const providers = new ProviderRegistry(
    loadLlmConfig({
      provider: 'openai_compatible',
      model: BENCH_MODEL,
      openaiCompatibleBaseUrl: fake.baseUrl,
    }),
  );
  const agents = await AgentRegistry.load(workspaceRoot);
  const agent = agents.get('default');
  if (!agent) throw new Error('the built-in agent "default" is missing');
  const catalog = new ToolCatalog();
  const breakers = new CircuitBreakerRegistry();
  const sandbox = createLocalSandbox();
  const saver = new MemorySaver();
  const backends = new Map<string, Promise<ExecutionBackend>>();
  const backendOf = (threadId: string): Promise<ExecutionBackend> => {
    let backend = backends.get(threadId);
    if (!backend) {
      backend = (async () => {
        const root = path.join(workspaceRoot, threadId);
        await mkdir(root, { recursive: true });
        return sandbox.forSession(threadId, root);
      })();
      backends.set(threadId, backend);
    }
    return backend;
  };

  return async (threadId, content) => {
    const resolved = providers.resolve({}, agent);
    const tools = catalog.forAgent(agent, agents.subagents());
    const chat = await createChatModel(resolved);
    if (!chat.bindTools) throw new Error('the openai_compatible chat model cannot bind tools');
    const model: BoundChatModel = chat.bindTools(tools.map(toToolDefinition));
    const events: AgentEvent[] = [];
    const userId = crypto.randomUUID();
    const turn = new AgentTurn({
      agent,
      tools,
      model,
      resolved,
      breaker: breakers.get(`llm:${resolved.provider.id}`, { isFailure: isProviderOutage }),
      signal: new AbortController().signal,
      emit: (event) => events.push(event),
      streamToClient: true,
      parentId: userId,
      runId: newRunId(),
      usage: new UsageMeter(resolved.provider.id, resolved.model, providers.price(resolved.model)),
      backend: () => backendOf(threadId),
      delegate: () => Promise.reject(new Error('the benchmark turn does not delegate')),
    });
    const graph = createAgentGraph(turn, saver);
    await graph.invoke(
      { messages: [new HumanMessage({ id: userId, content })] },
      { configurable: { thread_id: threadId }, recursionLimit: MAX_STEPS },
    );
    // The graph has no terminal event of its own: RunManager emits `done` once invoke resolves.
    return { ...shapeOf(events), terminal: 'done' };
  };
}
