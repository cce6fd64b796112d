import { z } from 'zod';
import { IdSchema } from '../common';

/*
 * Context management of long threads: how much of a thread a model call sees, and what the
 * next model call of a session would be sent. Snake_case like the agent files that set it.
 */

export const CONTEXT_STRATEGIES = ['summarize', 'sliding_window', 'none'] as const;
export const ContextStrategySchema = z.enum(CONTEXT_STRATEGIES);
export type ContextStrategy = z.infer<typeof ContextStrategySchema>;

/** Defaults of an agent's `context` settings (see docs/agents.md). */
export const CONTEXT_DEFAULTS = {
  strategy: 'summarize',
  keep_last_messages: 20,
  tool_output_max_tokens: 4000,
  /** `max_tokens` unset: this share of the model's known context window. */
  window_share: 0.75,
} as const;

/**
 * An agent's `context` settings (agent files: a `context:` map). Every key is optional; unset
 * keys take {@link CONTEXT_DEFAULTS}. `max_tokens` is the budget of one model call (system
 * prompt, tool schemas, summary and messages together).
 */
export const ContextSettingsSchema = z.strictObject({
  max_tokens: z.number().int().min(256).max(10_000_000).optional(),
  strategy: ContextStrategySchema.default(CONTEXT_DEFAULTS.strategy),
  keep_last_messages: z
    .number()
    .int()
    .min(1)
    .max(10_000)
    .default(CONTEXT_DEFAULTS.keep_last_messages),
  summary_model: z.string().min(1).max(256).optional(),
  tool_output_max_tokens: z
    .number()
    .int()
    .min(32)
    .max(1_000_000)
    .default(CONTEXT_DEFAULTS.tool_output_max_tokens),
});
export type ContextSettings = z.output<typeof ContextSettingsSchema>;
export type ContextSettingsInput = z.input<typeof ContextSettingsSchema>;

/**
 * The messages a summary stands for: always the oldest `message_count` messages of the thread,
 * from `first_message_id` to `last_message_id` inclusive (the checkpoint still holds them all).
 */
export const SummaryCoverageSchema = z.object({
  message_count: z.number().int().min(1),
  first_message_id: IdSchema,
  last_message_id: IdSchema,
});
export type SummaryCoverage = z.infer<typeof SummaryCoverageSchema>;

/** Tokens of each part of a model call's input; `total` is their sum. */
export const ContextPartsSchema = z.object({
  system_prompt: z.number().int().min(0),
  tool_schemas: z.number().int().min(0),
  summary: z.number().int().min(0),
  messages: z.number().int().min(0),
  total: z.number().int().min(0),
});
export type ContextParts = z.infer<typeof ContextPartsSchema>;

/**
 * What the next model call of a session would be sent, as counted before sending (see
 * docs/api.md "Context window"). Invariants: `parts.total` is the sum of the parts;
 * `visible_messages + (compacted?.message_count ?? 0) = thread_messages`, the messages outside
 * the window being covered by `summary` (strategy `summarize`) or dropped (`sliding_window`);
 * after a session `clear`, the thread counts from the clear mark (the model sees nothing before);
 * `will_compact` is true when `parts.total` exceeds `budget_tokens`, so the next call compacts
 * first.
 */
export const ContextWindowViewSchema = z.object({
  session_id: IdSchema,
  agent: z.string(),
  model: z.string(),
  strategy: ContextStrategySchema,
  /** How tokens were counted: `tiktoken:<encoding>` (exact for OpenAI models) or an estimate. */
  tokenizer: z.string(),
  /** The model's context window (the built-in table or the configuration); null when unknown. */
  window_tokens: z.number().int().min(1).nullable(),
  /** The budget of one call (`max_tokens`, else a share of the window); null for `none`. */
  budget_tokens: z.number().int().min(1).nullable(),
  parts: ContextPartsSchema,
  will_compact: z.boolean(),
  /** Messages in the checkpointed thread (all of them stay readable through the messages API). */
  thread_messages: z.number().int().min(0),
  /** Messages sent verbatim (tool results possibly truncated for the model). */
  visible_messages: z.number().int().min(0),
  /** Tool results of the window shown truncated (`tool_output_max_tokens`). */
  truncated_tool_outputs: z.number().int().min(0),
  summary: z.string().nullable(),
  /** The oldest messages that left the window: summarized, or dropped by `sliding_window`. */
  compacted: SummaryCoverageSchema.nullable(),
});
export type ContextWindowView = z.infer<typeof ContextWindowViewSchema>;
