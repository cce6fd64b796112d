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

/** A tool call a paused run waits on, as the `interrupt` event and the run's pending action show it. */
export const PendingToolCallSchema = z.object({
  id: z.string(),
  name: z.string(),
  args: z.unknown(),
  /** The decisions a person may take on this call (from the agent's `interrupt_on`). */
  allowed: z.array(HitlDecisionTypeSchema),
});
export type PendingToolCall = z.infer<typeof PendingToolCallSchema>;

/** What a run in status `requires_action` waits for: one decision per tool call. */
export const PendingActionSchema = z.object({
  tool_calls: z.array(PendingToolCallSchema).min(1),
});
export type PendingAction = z.infer<typeof PendingActionSchema>;

/**
 * A person's decision on one paused tool call: `approve` runs it as written, `edit` runs it with
 * `args` (validated against the tool's schema), `reject` answers the model with `message`
 * instead of running it.
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
]);
export type HitlDecision = z.infer<typeof HitlDecisionSchema>;

export const ResumeRunBodySchema = z.strictObject({
  decisions: z.array(HitlDecisionSchema).min(1).max(100),
});
export type ResumeRunBody = z.infer<typeof ResumeRunBodySchema>;

/** What a session shows while its run waits for a decision (`sessions.get`; null otherwise). */
export interface SessionPendingAction {
  runId: string;
  toolCalls: PendingToolCall[];
}
