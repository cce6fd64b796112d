import { mkdir } from 'node:fs/promises';
import { join } from 'node:path';
import type { Session, Usage } from '@cognition/contracts';
import type { ExecutionBackend } from '@cognition/sandbox';
import { artifactContext } from '../../artifacts/artifact-context';
import { runArtifacts } from '../../artifacts/run-artifacts';
import { createCompactor } from '../../context/setup';
import type { McpRunTools } from '../../mcp/mcp-manager';
import { UsageMeter } from '../../providers/usage';
import { missingAgent } from '../../registry/config-registry';
import { sessionSystemPrompt } from '../../sessions/system-prompt';
import type { RuntimeTool } from '../../tools/types';
import { workspaceContext } from '../../workspace/workspace-context';
import type { ActiveRun, RunContext } from '../run-context';
import type { RunEmitter } from '../run-emitter';
import { AgentTurn } from './agent-turn';
import { delegate } from './delegation';
import { bindModel, breakerFor } from './model-binding';
import type { AgentRunInput } from './turn-input';
import { UsageProgress } from './usage-progress';

/**
 * An agent run's turn set-up (run-executor.ts runs it): the agent and model from the registry,
 * the usage meter and its progress, the workspace, MCP and client tools, the system prompt, and
 * the `AgentTurn` the graph's steps call.
 */

/**
 * What the set-up holds as soon as it has it: a failure later in the set-up still hands the
 * meter to the finisher, settles the progress and releases the MCP tools.
 */
export interface TurnHold {
  meter: UsageMeter | null;
  progress: UsageProgress | null;
  mcp: McpRunTools | null;
}

export interface TurnSetUp {
  turn: AgentTurn;
  tools: RuntimeTool[];
  /** Tool calls a resumed turn must not run again (filled by the input choice, turn-input.ts). */
  interruptedCalls: Set<string>;
}

export async function setUpTurn(
  ctx: RunContext,
  active: ActiveRun,
  input: AgentRunInput,
  priorUsage: Usage | null,
  hold: TurnHold,
): Promise<TurnSetUp> {
  const { session, userMessage } = input;
  const { emitter, controller } = active;
  const signal = controller.signal;
  // Read at every start (by the send, for a fresh run): an agent or provider changed
  // through the registry API applies to the next run on every node.
  const registry = input.fresh?.registry ?? (await ctx.registry.current());
  const agent = registry.agents.get(session.agentName);
  if (!agent) throw missingAgent(session.agentName);
  const resolved = registry.providers.resolve(session.config, agent);
  const runMeter = new UsageMeter(
    resolved.provider.id,
    resolved.model,
    registry.providers.price(resolved.model, resolved.provider),
  );
  const progress = new UsageProgress(
    ctx.storage,
    ctx.log,
    active.runId,
    priorUsage,
    runMeter,
    ctx.logger,
    active.fence ?? undefined,
  );
  hold.progress = progress;
  runMeter.onCall((call) => {
    ctx.observer.modelCall({ runId: active.runId, ...call });
    progress.record();
  });
  hold.meter = runMeter;
  const backend = sessionBackend(ctx, session, active.runId);
  const workspace = await workspaceContext({
    agent,
    tools: ctx.catalog.forAgent(agent, registry.agents.subagents()),
    skills: ctx.skills,
    backend,
    logger: ctx.logger,
  });
  const mcp = await ctx.mcp.forRun(session.id, agent, { backend, signal });
  hold.mcp = mcp;
  const tools = [...workspace.tools, ...mcp.tools];
  // A client tool named like one of the agent's is not offered: the agent's own runs.
  const clientTools = (
    input.fresh?.clientTools ??
    (await ctx.storage.runs.pendingInput(active.runId))?.clientTools ??
    []
  ).filter((client) => !tools.some((tool) => tool.name === client.name));
  let firstToken = true;
  const emit = (event: Parameters<RunEmitter['emit']>[0]) => {
    if (firstToken && event.type === 'token') {
      firstToken = false;
      ctx.observer.firstToken({ runId: active.runId });
    }
    void emitter.emit(event);
  };
  const interruptedCalls = new Set<string>();
  const artifacts = runArtifacts(ctx.storage.artifacts, session, active.runId);
  const systemPrompt =
    sessionSystemPrompt(session, agent.systemPrompt) +
    (await artifactContext(artifacts.store, artifacts.access)) +
    workspace.prompt +
    mcp.note;
  const turn = new AgentTurn({
    agent,
    tools,
    clientTools,
    model: await bindModel(ctx, resolved, tools, clientTools),
    resolved,
    breaker: breakerFor(ctx, resolved),
    signal,
    emit,
    streamToClient: true,
    askForDecisions: true,
    parentId: userMessage.id,
    runId: active.runId,
    usage: runMeter,
    backend,
    settleEvents: async () => {
      await emitter.flush();
      return emitter.lastId;
    },
    ownsRun: () => active.cancelReason !== 'lost',
    claimHeld: active.claimHeld,
    interruptedCalls,
    artifacts,
    ...(workspace.skills ? { skills: workspace.skills } : {}),
    systemPrompt,
    delegate: (name, task) =>
      delegate(
        ctx,
        { session, signal, emit, meter: runMeter, runId: active.runId, backend, registry },
        name,
        task,
      ),
    compactor: await createCompactor(
      { agent, resolved, tools, meter: runMeter, systemPrompt },
      {
        providers: registry.providers,
        chatModelFactory: ctx.chatModelFactory,
        breakerFor: (model) => breakerFor(ctx, model),
      },
    ),
  });
  return { turn, tools, interruptedCalls };
}

/**
 * Opens the session's sandbox once per run, on first use: the memory files are read through it
 * when a turn starts (file operations only; a docker container waits for a command). Commands
 * are recorded under `runId`, so recovery can end what a crash left running (`reapOrphans`).
 */
export function sessionBackend(
  ctx: Pick<RunContext, 'sandbox' | 'workspaceRoot'>,
  session: Session,
  runId?: string,
): () => Promise<ExecutionBackend> {
  let pending: Promise<ExecutionBackend> | null = null;
  return () => {
    pending ??= (async () => {
      const root = session.workspacePath ?? join(ctx.workspaceRoot, session.id);
      await mkdir(root, { recursive: true });
      return ctx.sandbox.forSession(session.id, root, runId === undefined ? {} : { runId });
    })();
    return pending;
  };
}
