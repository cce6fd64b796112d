import type {
  AgentExpose,
  ContextSettings,
  InterruptOn,
  McpServerConfig,
} from '@cognition/contracts';
import type { ToolName } from '../tools/names';
import { TOOL_NAMES } from '../tools/names';

export type AgentMode = 'primary' | 'subagent';

/**
 * An agent: a system prompt plus the tools and model settings a run uses.
 * Invariants: `tools` holds known tool names only, and a model is offered exactly these tools
 * (a tool the agent lacks is not merely refused at call time: the model never sees it).
 * `mode: 'subagent'` agents can only be delegated to (`task` tool), never bound to a session.
 */
export interface AgentDefinition {
  name: string;
  description: string;
  mode: AgentMode;
  tools: readonly ToolName[];
  /** Model name; null = the session's or the default provider's model. */
  model: string | null;
  /** null = the session's or the provider's default. */
  temperature: number | null;
  systemPrompt: string;
  /**
   * How a long thread is fitted into the model's context (docs/agents.md "Context"); absent:
   * the defaults (`summarize`, budget a share of the model's window).
   */
  context?: ContextSettings;
  /**
   * Tools whose calls wait for a person's decision before they run (human in the loop); empty:
   * every call runs unasked. Keys are tool names, built-in or `mcp__<server>__<tool>`.
   */
  interruptOn: InterruptOn;
  /** Model Context Protocol servers whose tools the agent is offered (`mcp__<server>__<tool>`). */
  mcpServers: readonly McpServerConfig[];
  /** The workspace skills the agent is told about (names); null = every skill. */
  skills: readonly string[] | null;
  /**
   * The open protocols that offer the agent to outside clients (MCP tool, A2A agent card,
   * AG-UI endpoint); absent: all of them (`DEFAULT_EXPOSE`). Only primary agents are offered.
   */
  expose?: AgentExpose;
  /** `builtin`, or the absolute path of the file that defined the agent. */
  source: string;
}

/** Every protocol offers an agent unless its definition says `expose: { <protocol>: false }`. */
export const DEFAULT_EXPOSE: AgentExpose = { mcp: true, a2a: true, ag_ui: true };

/** Whether `protocol` offers `agent` to its clients: primary agents not left out by `expose`. */
export function exposedOver(agent: AgentDefinition, protocol: keyof AgentExpose): boolean {
  return agent.mode === 'primary' && (agent.expose ?? DEFAULT_EXPOSE)[protocol];
}

const DEFAULT_PROMPT = `You are Cognition, an autonomous software agent working inside a sandboxed workspace.
Use the tools to inspect and change files and to run commands; prefer small, verifiable steps.
For multi-step work, keep a plan with write_todos and mark items completed as you finish them.
When a tool fails, read its output and adapt instead of repeating the same call.
Answer concisely and say what you changed.`;

const READONLY_PROMPT = `You are Cognition in read-only mode. You can list, read and search files in the
workspace but you cannot modify files or run commands. Explain what you find, cite file paths, and
when a change is needed describe it precisely instead of making it.`;

export const BUILTIN_AGENTS: readonly AgentDefinition[] = [
  {
    name: 'default',
    description: 'General-purpose agent with every tool.',
    mode: 'primary',
    tools: TOOL_NAMES,
    model: null,
    temperature: null,
    systemPrompt: DEFAULT_PROMPT,
    interruptOn: {},
    mcpServers: [],
    skills: null,
    source: 'builtin',
  },
  {
    name: 'readonly',
    description: 'Reads and searches the workspace; cannot write, delete or execute.',
    mode: 'primary',
    tools: [
      'ls',
      'read_file',
      'glob',
      'grep',
      'write_todos',
      'artifact_list',
      'artifact_read',
      'read_skill',
    ],
    model: null,
    temperature: null,
    systemPrompt: READONLY_PROMPT,
    interruptOn: {},
    mcpServers: [],
    skills: null,
    source: 'builtin',
  },
];
