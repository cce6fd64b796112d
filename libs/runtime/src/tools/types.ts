import type { AgentEvent, FieldIssue, Todo } from '@cognition/contracts';
import { toFieldIssues } from '@cognition/contracts';
import type { ExecutionBackend } from '@cognition/sandbox';
import type { ArtifactAccess, ArtifactStore } from '@cognition/storage';
import type { z } from 'zod';
import type { LoadedSkill, SkillFileRead } from '../skills/skill-library';
import type { ToolName } from './names';
import { checkJsonArgs } from './json-args';

/** What a tool may use while it runs. */
export interface ToolContext {
  /** The session's sandbox, created on first use. */
  backend(): Promise<ExecutionBackend>;
  /** Aborted when the run is aborted: a tool must stop promptly (within a second). */
  signal: AbortSignal;
  /** Appends an event to the run's stream (planning, step_complete, delegation). */
  emit(event: AgentEvent): void;
  /** The plan as of the start of this tool call. */
  todos: readonly Todo[];
  /** Runs a subagent on a task and returns its final answer (only for the `task` tool). */
  delegate(agentName: string, task: string): Promise<ToolResult>;
  /** The artifact store as this run sees it (absent: the artifact tools say so). */
  artifacts?: ArtifactToolContext;
  /** The skills this run's agent may load (absent: `read_skill` says there are none). */
  skills?: SkillToolContext;
}

/** The workspace's skills as one agent sees them: only those its `skills` list allows. */
export interface SkillToolContext {
  /** The names the agent was shown, sorted. */
  names: readonly string[];
  /** null for a name the agent was not shown, or a skill that is no longer valid. */
  load(name: string): Promise<LoadedSkill | null>;
  readFile(name: string, file: string): Promise<SkillFileRead>;
}

/** The store and the run's access to it: its session's scope, session and run. */
export interface ArtifactToolContext {
  store: ArtifactStore;
  access: ArtifactAccess & { agent: { sessionId: string; runId: string } };
}

/** What the model gets back. `exitCode` 0 = success; failures are results, never exceptions. */
export interface ToolResult {
  output: string;
  exitCode: number;
  /** A new plan (write_todos). */
  todos?: Todo[];
}

interface ToolBase {
  description: string;
  /**
   * Whether running the same call twice has the effect of running it once. After a crash
   * while the tool ran, a resumed run re-runs an idempotent call and answers a non-idempotent
   * one "interrupted" to the model (it may or may not have taken effect).
   */
  idempotent: boolean;
}

/** A built-in tool: its arguments are described by a zod schema (converted for the model). */
export interface ZodTool<S extends z.ZodType = z.ZodType> extends ToolBase {
  name: ToolName;
  /** Validates the model's arguments; a mismatch is reported back to the model. */
  schema: S;
  inputSchema?: never;
  run(args: z.output<S>, ctx: ToolContext): Promise<ToolResult>;
}

/** A JSON Schema document (an object schema for tool arguments). */
export type JsonSchema = Record<string, unknown>;

/**
 * A tool that brings its own JSON Schema (an MCP server's tool, `mcp__<server>__<tool>`): the
 * schema is offered to the model as is and validates the arguments.
 */
export interface JsonSchemaTool extends ToolBase {
  name: string;
  inputSchema: JsonSchema;
  schema?: never;
  /** `args` passed `checkToolArgs` against `inputSchema`. */
  run(args: unknown, ctx: ToolContext): Promise<ToolResult>;
}

export type RuntimeTool = ZodTool | JsonSchemaTool;

/** Keeps each tool result within what is sensible to send back to a model. */
const TOOL_OUTPUT_MAX_CHARS = 100_000;

export function capOutput(text: string, max: number = TOOL_OUTPUT_MAX_CHARS): string {
  if (text.length <= max) return text;
  return `${text.slice(0, max)}\n[output truncated: ${text.length - max} more characters]`;
}

/** Declares a tool while keeping its argument type tied to its schema. */
export function defineTool<S extends z.ZodType>(tool: ZodTool<S>): RuntimeTool {
  return tool;
}

/**
 * Checks a tool call's arguments against the tool's schema (zod for built-in tools, the JSON
 * Schema of an MCP tool): what a model wrote, and what a person wrote when editing a paused call
 * (human in the loop). The one place arguments are validated.
 */
export function checkToolArgs(
  tool: RuntimeTool,
  args: unknown,
): { ok: true; value: unknown } | { ok: false; issues: FieldIssue[] } {
  if (tool.inputSchema !== undefined) return checkJsonArgs(tool.inputSchema, args);
  const parsed = tool.schema.safeParse(args);
  return parsed.success
    ? { ok: true, value: parsed.data }
    : { ok: false, issues: toFieldIssues(parsed.error) };
}
