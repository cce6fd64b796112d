import { runArtifacts } from '../../artifacts/run-artifacts';
import type { Session } from '@cognition/contracts';
import type { ExecutionBackend } from '@cognition/sandbox';
import { HumanMessage } from '@langchain/core/messages';
import { errorMessage } from '../../errors';
import { createAgentGraph } from '../../graph/agent-graph';
import { newMessageId } from '../../ids';
import { UsageMeter } from '../../providers/usage';
import type { McpRunTools } from '../../mcp/mcp-manager';
import { skillContext } from '../../workspace/skill-context';
import type { ToolResult } from '../../tools/types';
import { AgentTurn, textOf } from './agent-turn';
import { TOOL_EXIT } from './tool-call';
import { bindModel, breakerFor } from './model-binding';
import type { RegistrySnapshot } from '../../registry/config-registry';
import type { RunContext } from '../run-context';
import type { RunEmitter } from '../run-emitter';

/** What a subagent borrows from the run that delegates to it. */
export interface DelegatingRun {
  session: Session;
  signal: AbortSignal;
  emit: (event: Parameters<RunEmitter['emit']>[0]) => void;
  meter: UsageMeter;
  runId: string;
  backend: () => Promise<ExecutionBackend>;
  /** The agents and providers the delegating run started with. */
  registry: RegistrySnapshot;
}

/**
 * Runs subagent `agentName` on `task` (the `task` tool): its own tools, no checkpoint, no
 * tokens on the session's stream, its usage added to the parent's. Failures and aborts become
 * the tool's result, never an exception.
 */
export async function delegate(
  ctx: RunContext,
  parent: DelegatingRun,
  agentName: string,
  task: string,
): Promise<ToolResult> {
  const subagents = parent.registry.agents.subagents();
  const agent = subagents.find((a) => a.name === agentName);
  if (!agent) {
    const names = subagents.map((a) => a.name).join(', ') || 'none';
    return {
      output: `Unknown subagent "${agentName}". Available: ${names}.`,
      exitCode: TOOL_EXIT.unknownTool,
    };
  }
  parent.emit({ type: 'delegation', target_agent: agent.name, task });
  let mcp: McpRunTools | null = null;
  try {
    const { providers } = parent.registry;
    const resolved = providers.resolve({ providerId: parent.session.config.providerId }, agent);
    const meter = new UsageMeter(
      resolved.provider.id,
      resolved.model,
      providers.price(resolved.model, resolved.provider),
    );
    parent.meter.addNested(meter);
    // A subagent gets its task, not the session's memory, but it may use the skills it is
    // allowed, like any agent, and its own MCP servers.
    const skills = await skillContext(
      ctx.skills,
      agent,
      ctx.catalog.forAgent(agent, []),
      ctx.logger,
    );
    mcp = await ctx.mcp.forRun(parent.session.id, agent, {
      backend: parent.backend,
      signal: parent.signal,
    });
    const tools = [...skills.tools, ...mcp.tools];
    const systemPrompt =
      (skills.section === '' ? agent.systemPrompt : `${agent.systemPrompt}\n\n${skills.section}`) +
      mcp.note;
    const turn = new AgentTurn({
      agent,
      tools,
      ...(skills.access ? { skills: skills.access } : {}),
      systemPrompt,
      model: await bindModel(ctx, resolved, tools),
      resolved,
      breaker: breakerFor(ctx, resolved),
      signal: parent.signal,
      emit: parent.emit,
      streamToClient: false,
      parentId: null,
      runId: parent.runId,
      usage: meter,
      backend: parent.backend,
      artifacts: runArtifacts(ctx.storage.artifacts, parent.session, parent.runId),
      delegate: () =>
        Promise.resolve({
          output: 'Subagents cannot delegate further.',
          exitCode: TOOL_EXIT.unknownTool,
        }),
    });
    const result = await createAgentGraph(turn).invoke(
      { messages: [new HumanMessage({ id: newMessageId(), content: task })] },
      { recursionLimit: ctx.maxSteps },
    );
    if (parent.signal.aborted) return { output: 'Aborted.', exitCode: TOOL_EXIT.aborted };
    const last = result.messages[result.messages.length - 1];
    const text = last ? textOf(last.content) : '';
    return { output: text === '' ? '(the subagent returned no text)' : text, exitCode: 0 };
  } catch (error) {
    if (parent.signal.aborted) return { output: 'Aborted.', exitCode: TOOL_EXIT.aborted };
    return {
      output: `Subagent "${agent.name}" failed: ${errorMessage(error)}`,
      exitCode: TOOL_EXIT.failed,
    };
  } finally {
    mcp?.release();
  }
}
