import { z } from 'zod';
import { HitlDecisionTypeSchema, McpServerNameSchema } from './agent';
import { ContextSettingsSchema } from './context';

/**
 * Where a registry entry comes from: `builtin` (shipped with the server), `file` (an agent file
 * or the providers file), `environment` (the provider the server's environment variables define:
 * `COGNITION_LLM_PROVIDER`, or an API key alone) or `api` (the registry API). Only `api` entries
 * can be changed or deleted through the API.
 */
export const RegistrySourceSchema = z.enum(['builtin', 'file', 'environment', 'api']);
export type RegistrySource = z.infer<typeof RegistrySourceSchema>;

/** What every registry answer carries besides the definition. */
const entryMeta = {
  source: RegistrySourceSchema,
  /** true unless `source` is `api`. */
  read_only: z.boolean(),
  /** The stored version (`api` entries; null for the others): what `expected_version` names. */
  version: z.number().int().nullable(),
  created_at: z.string().nullable(),
  updated_at: z.string().nullable(),
};

/**
 * An MCP server of an agent as the registry API shows it: its settings without the values of
 * `env` (stdio) and `headers` (HTTP), which are write-only like a provider's API key and
 * encrypted at rest: `env_set`/`headers_set` say whether any is stored, `env_names`/
 * `header_names` which (names are not secret).
 */
export const McpServerViewSchema = z.union([
  z.object({
    name: McpServerNameSchema,
    command: z.string(),
    args: z.array(z.string()),
    env_set: z.boolean(),
    env_names: z.array(z.string()),
    cwd: z.string().optional(),
    timeout_ms: z.number().int().optional(),
  }),
  z.object({
    name: McpServerNameSchema,
    url: z.string(),
    headers_set: z.boolean(),
    header_names: z.array(z.string()),
    allow_private: z.boolean(),
    timeout_ms: z.number().int().optional(),
  }),
]);
export type McpServerView = z.infer<typeof McpServerViewSchema>;

/**
 * An agent as the registry API shows it: the fields of an agent definition document (as an agent
 * file holds them, with defaults applied), plus where it comes from and its version.
 */
export const AgentViewSchema = z.object({
  name: z.string(),
  description: z.string(),
  mode: z.enum(['primary', 'subagent']),
  tools: z.array(z.string()),
  model: z.string().nullable(),
  temperature: z.number().nullable(),
  context: ContextSettingsSchema.nullable(),
  interrupt_on: z.record(z.string(), z.object({ allowed: z.array(HitlDecisionTypeSchema) })),
  mcp_servers: z.array(McpServerViewSchema),
  skills: z.array(z.string()).nullable(),
  /** The open protocols that offer the agent (defaults applied). */
  expose: z.object({ mcp: z.boolean(), a2a: z.boolean(), ag_ui: z.boolean() }),
  system_prompt: z.string(),
  /** The agent file's path (`source: file`), else null. */
  file: z.string().nullable(),
  ...entryMeta,
});
export type AgentView = z.infer<typeof AgentViewSchema>;

/**
 * An LLM provider as the registry API shows it: its settings (camelCase, as in the providers
 * file) without the API key, which is write-only (`apiKeySet` tells whether one is stored).
 */
export const ProviderViewSchema = z.object({
  id: z.string(),
  kind: z.enum(['openai', 'anthropic', 'openai_compatible']),
  model: z.string(),
  /** Every model it serves (`model` first). */
  models: z.array(z.string()),
  baseUrl: z.string().nullable(),
  priority: z.number().int(),
  enabled: z.boolean(),
  temperature: z.number().nullable(),
  maxTokens: z.number().int().nullable(),
  maxRetries: z.number().int(),
  timeoutMs: z.number().int(),
  apiKeySet: z.boolean(),
  source: RegistrySourceSchema,
  readOnly: z.boolean(),
  version: z.number().int().nullable(),
  createdAt: z.string().nullable(),
  updatedAt: z.string().nullable(),
});
export type ProviderView = z.infer<typeof ProviderViewSchema>;
