import type { AgentEvent, Todo } from '@cognition/contracts';
import type { ExecutionBackend } from '@cognition/sandbox';
import type { AgentDefinition } from '../../agents/agent';
import { errorMessage } from '../../errors';
import type {
  ArtifactToolContext,
  RuntimeTool,
  SkillToolContext,
  ToolResult,
} from '../../tools/types';
import { checkToolArgs } from '../../tools/types';

/** Exit codes of tool results the runtime itself produces. */
export const TOOL_EXIT = {
  failed: 1,
  badArguments: 2,
  /** A person rejected the call (human in the loop): it did not run. */
  rejected: 126,
  unknownTool: 127,
  aborted: 130,
} as const;

/** What running one tool call of a turn needs (the tool step's part of `AgentTurnOptions`). */
export interface ToolCallOptions {
  agent: AgentDefinition;
  signal: AbortSignal;
  emit: (event: AgentEvent) => void;
  /** false for subagents: their tokens and tool traffic stay out of the session's stream. */
  streamToClient: boolean;
  backend: () => Promise<ExecutionBackend>;
  delegate: (agentName: string, task: string) => Promise<ToolResult>;
  /** The run's view of the artifact store, for the artifact tools. */
  artifacts?: ArtifactToolContext;
  /** The skills the agent may load with `read_skill`. */
  skills?: SkillToolContext;
  /**
   * Calls of non-idempotent tools that were running when the previous process died: answered
   * "interrupted" instead of being run again (see `RuntimeTool.idempotent`).
   */
  interruptedCalls?: ReadonlySet<string>;
}

/** One call the model made, as the tool step runs it. */
export interface ToolCallRequest {
  id: string;
  name: string;
  args: unknown;
  /** The plan as it stands before this call (the todo tools read and replace it). */
  todos: readonly Todo[];
  /** Why the call's arguments were not valid JSON, when they were not. */
  invalidArgs: string | undefined;
}

/**
 * Runs one tool call and always answers with a tool result: a call that must not run (the run
 * was aborted, a non-idempotent call interrupted by a crash, arguments that are not JSON or do
 * not fit the tool's schema, a tool the agent does not have) and a tool that throws are results
 * with the exit codes of `TOOL_EXIT`, which the model reads like any other output.
 */
export async function runToolCall(
  call: ToolCallRequest,
  tools: ReadonlyMap<string, RuntimeTool>,
  options: ToolCallOptions,
): Promise<ToolResult> {
  const { id, name, args, todos } = call;
  const { signal } = options;
  if (signal.aborted)
    return { output: 'Not run: the run was aborted.', exitCode: TOOL_EXIT.aborted };
  if (options.interruptedCalls?.has(id)) {
    return {
      output: `Not run again: the server stopped while this ${name} call was running, and ${name} is not safe to repeat. It may or may not have taken effect; check before retrying.`,
      exitCode: TOOL_EXIT.aborted,
    };
  }
  if (call.invalidArgs !== undefined) {
    return {
      output: `Invalid arguments for ${name}: ${call.invalidArgs}`,
      exitCode: TOOL_EXIT.badArguments,
    };
  }
  const tool = tools.get(name);
  if (!tool) {
    const available = [...tools.keys()].join(', ') || 'none';
    return {
      output: `Tool "${name}" is not available to agent "${options.agent.name}". Available tools: ${available}.`,
      exitCode: TOOL_EXIT.unknownTool,
    };
  }
  const parsed = checkToolArgs(tool, args);
  if (!parsed.ok) {
    const problems = parsed.issues.map((issue) => `${issue.path}: ${issue.message}`).join('; ');
    return {
      output: `Invalid arguments for ${name}: ${problems}`,
      exitCode: TOOL_EXIT.badArguments,
    };
  }
  try {
    return await tool.run(parsed.value, {
      backend: options.backend,
      signal,
      emit: (event) => {
        if (options.streamToClient) options.emit(event);
      },
      todos,
      delegate: options.delegate,
      ...(options.artifacts ? { artifacts: options.artifacts } : {}),
      ...(options.skills ? { skills: options.skills } : {}),
    });
  } catch (error) {
    if (signal.aborted) return { output: 'Aborted.', exitCode: TOOL_EXIT.aborted };
    const code = (error as { code?: unknown }).code;
    const prefix = typeof code === 'string' ? `${code}: ` : '';
    return { output: `Error: ${prefix}${errorMessage(error)}`, exitCode: TOOL_EXIT.failed };
  }
}
