import { z } from 'zod';

/**
 * What a person may decide about a tool call an agent paused on (human in the loop):
 * run it as the model wrote it, run it with other arguments, or answer the model without
 * running it.
 */
export const HitlDecisionTypeSchema = z.enum(['approve', 'edit', 'reject']);
export type HitlDecisionType = z.infer<typeof HitlDecisionTypeSchema>;
export const HITL_DECISION_TYPES = HitlDecisionTypeSchema.options;

/**
 * What may answer a paused tool call: a person's decisions, and `respond` — the result of a
 * tool the client runs itself (a frontend tool of an AG-UI client, `clientTools` of a send),
 * given instead of running anything on the server.
 */
export const PendingDecisionTypeSchema = z.enum([...HITL_DECISION_TYPES, 'respond']);
export type PendingDecisionType = z.infer<typeof PendingDecisionTypeSchema>;

/**
 * A tool name an agent definition may mention: a built-in tool (checked against the runtime's
 * catalogue where the definition is loaded) or an MCP tool, `mcp__<server>__<tool>`.
 */
export const McpToolNamePattern = /^mcp__[a-zA-Z0-9_-]+__[a-zA-Z0-9_.-]+$/;

/**
 * `interrupt_on` of an agent definition: tool name → the decisions a person may take when the
 * model calls it (`true`: all three). A tool absent from the map runs without asking.
 */
export const InterruptOnSchema = z.record(
  z.string().min(1).max(200),
  z.union([z.literal(true), z.strictObject({ allowed: z.array(HitlDecisionTypeSchema).min(1) })]),
);
export type InterruptOnInput = z.infer<typeof InterruptOnSchema>;
/** The normalised form: every entry lists its allowed decisions. */
export type InterruptOn = Readonly<Record<string, readonly HitlDecisionType[]>>;

export function normalizeInterruptOn(input: InterruptOnInput | undefined): InterruptOn {
  const out: Record<string, HitlDecisionType[]> = {};
  for (const [tool, rule] of Object.entries(input ?? {})) {
    out[tool] = rule === true ? [...HITL_DECISION_TYPES] : [...new Set(rule.allowed)];
  }
  return out;
}

/**
 * Which open protocols offer an agent to outside clients (`expose` of an agent definition):
 * `mcp` (a tool `ask_<agent>` of the `/mcp` server), `a2a` (an A2A agent card), `ag_ui` (an
 * AG-UI endpoint). A protocol left out defaults to true.
 */
export const AgentExposeSchema = z.strictObject({
  mcp: z.boolean().default(true),
  a2a: z.boolean().default(true),
  ag_ui: z.boolean().default(true),
});
export type AgentExpose = z.infer<typeof AgentExposeSchema>;

/** The name of an MCP server: it becomes part of its tools' names (`mcp__<name>__<tool>`). */
export const McpServerNameSchema = z
  .string()
  .min(1)
  .max(64)
  .regex(/^[a-zA-Z0-9][a-zA-Z0-9_-]*$/, 'MCP server names are letters, digits, - and _')
  .refine((name) => !name.includes('__'), 'MCP server names cannot contain "__"');

/**
 * One Model Context Protocol server an agent uses: a stdio server (`command`, `args`, `env`,
 * `cwd` relative to the workspace) or a Streamable HTTP server (`url`, `headers`).
 * `allow_private: true` lets an HTTP server live on a private or loopback address (the same rule
 * as web_fetch otherwise refuses those).
 */
export const McpServerConfigSchema = z.union([
  z.strictObject({
    name: McpServerNameSchema,
    command: z.string().min(1),
    args: z.array(z.string()).default([]),
    env: z.record(z.string(), z.string()).default({}),
    cwd: z.string().min(1).optional(),
    timeout_ms: z.number().int().min(100).max(600_000).optional(),
  }),
  z.strictObject({
    name: McpServerNameSchema,
    url: z.url({ protocol: /^https?$/ }),
    headers: z.record(z.string(), z.string()).default({}),
    allow_private: z.boolean().default(false),
    timeout_ms: z.number().int().min(100).max(600_000).optional(),
  }),
]);
export type McpServerConfig = z.output<typeof McpServerConfigSchema>;
export type McpServerConfigInput = z.input<typeof McpServerConfigSchema>;

/** The longest result a client may give for one of its tool calls (characters). */
export const CLIENT_TOOL_OUTPUT_MAX = 100_000;

/**
 * A tool the client runs itself, offered to the model for one run (AG-UI's frontend tools):
 * when the model calls it the run pauses (`requires_action`, the call allowing `respond` only)
 * until the client gives the result. `parameters` is the JSON Schema of its arguments.
 */
export const ClientToolSchema = z.object({
  name: z
    .string()
    .regex(/^[a-zA-Z0-9_-]{1,64}$/, 'letters, digits, _ and -, at most 64')
    .refine((name) => !name.startsWith('mcp__'), 'mcp__ names the tools of MCP servers'),
  description: z.string().max(4096).default(''),
  parameters: z.record(z.string(), z.unknown()).default(() => ({ type: 'object', properties: {} })),
});
export type ClientTool = z.output<typeof ClientToolSchema>;
/** At most this many client tools per run. */
export const CLIENT_TOOLS_MAX = 64;
/** The client tools of one run: distinct names, at most `CLIENT_TOOLS_MAX`. */
export const ClientToolsSchema = z
  .array(ClientToolSchema)
  .max(CLIENT_TOOLS_MAX)
  .refine((tools) => new Set(tools.map((t) => t.name)).size === tools.length, {
    message: 'tool names must be distinct',
  });

/** A tool call a paused run waits on, as the `interrupt` event and the run's pending action show it. */
export const PendingToolCallSchema = z.object({
  id: z.string(),
  name: z.string(),
  args: z.unknown(),
  /**
   * The decisions that may answer this call: a person's (from the agent's `interrupt_on`), or
   * `respond` alone for a tool the client runs.
   */
  allowed: z.array(PendingDecisionTypeSchema),
});
export type PendingToolCall = z.infer<typeof PendingToolCallSchema>;

/** What a run in status `requires_action` waits for: one decision per tool call. */
export const PendingActionSchema = z.object({
  tool_calls: z.array(PendingToolCallSchema).min(1),
});
export type PendingAction = z.infer<typeof PendingActionSchema>;

/**
 * A decision on one paused tool call: `approve` runs it as written, `edit` runs it with
 * `args` (validated against the tool's schema), `reject` answers the model with `message`
 * instead of running it, `respond` gives the call's result (`output`) from the client that ran
 * it (a call allowing `respond` only: a client tool).
 */
export const HitlDecisionSchema = z.discriminatedUnion('type', [
  z.strictObject({ tool_call_id: z.string().min(1), type: z.literal('approve') }),
  z.strictObject({
    tool_call_id: z.string().min(1),
    type: z.literal('edit'),
    args: z.record(z.string(), z.unknown()),
  }),
  z.strictObject({
    tool_call_id: z.string().min(1),
    type: z.literal('reject'),
    message: z.string().min(1).max(10_000).optional(),
  }),
  z.strictObject({
    tool_call_id: z.string().min(1),
    type: z.literal('respond'),
    output: z.string().max(CLIENT_TOOL_OUTPUT_MAX),
  }),
]);
export type HitlDecision = z.infer<typeof HitlDecisionSchema>;

export const ResumeRunBodySchema = z.strictObject({
  decisions: z.array(HitlDecisionSchema).min(1).max(100),
});

/** What a session shows while its run waits for a decision (`sessions.get`; null otherwise). */
export interface SessionPendingAction {
  runId: string;
  toolCalls: PendingToolCall[];
}
