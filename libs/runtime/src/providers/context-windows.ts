/**
 * Context windows (input + output tokens) of common models, as published by their vendors when
 * this table was written. Deployments correct or extend it through `LlmConfig.contextWindows`
 * (the providers file's `contextWindows`); a model found in neither is "unknown" (see
 * `FALLBACK_CONTEXT_WINDOW`).
 */
export const DEFAULT_CONTEXT_WINDOWS: Readonly<Record<string, number>> = {
  'gpt-3.5-turbo': 16_385,
  'gpt-4': 8_192,
  'gpt-4-turbo': 128_000,
  'gpt-4o': 128_000,
  'gpt-4o-mini': 128_000,
  'gpt-4.1': 1_047_576,
  'gpt-4.1-mini': 1_047_576,
  'gpt-4.1-nano': 1_047_576,
  'gpt-5': 400_000,
  'gpt-5-mini': 400_000,
  'gpt-5-nano': 400_000,
  o1: 200_000,
  o3: 200_000,
  'o3-mini': 200_000,
  'o4-mini': 200_000,
  'claude-3-haiku': 200_000,
  'claude-3-opus': 200_000,
  'claude-3-5-haiku': 200_000,
  'claude-3-5-sonnet': 200_000,
  'claude-3-7-sonnet': 200_000,
  'claude-haiku-4-5': 200_000,
  'claude-sonnet-4': 200_000,
  'claude-sonnet-4-5': 200_000,
  'claude-opus-4': 200_000,
  'claude-opus-4-1': 200_000,
};

/**
 * The window assumed for a model of unknown window (typically a local model behind an
 * OpenAI-compatible server): small enough for most of them. Set the agent's `context.max_tokens`
 * or the providers file's `contextWindows` for such models.
 */
export const FALLBACK_CONTEXT_WINDOW = 32_768;
