import {
  AgentNameSchema,
  AgentViewSchema,
  McpServerConfigSchema,
  ProviderViewSchema,
} from '@cognition/contracts';
import { AgentDefinitionFieldsSchema, PROVIDER_KINDS } from '@cognition/runtime';
import { z } from 'zod';
import { queryInt } from './common';

/*
 * The registry routes' wire shapes. An agent is the agent files' own document (snake_case
 * already); a provider is the providers file's entry in snake_case. Both are validated in full
 * by the runtime's one validator behind the routes; these schemas check the shape and publish
 * it in OpenAPI.
 */

const ExpectedVersion = z
  .number()
  .int()
  .min(1)
  .meta({ description: 'Apply only if the stored version still equals this (409 otherwise)' });

export const AgentNameParams = z.object({
  name: AgentNameSchema.meta({ description: 'Agent name' }),
});
export const ProviderIdParams = z.object({
  id: z.string().min(1).max(64).meta({ description: 'Provider id' }),
});

export const ExpectedVersionQuery = z
  .object({
    expected_version: queryInt(1, 1_000_000_000, 'Delete only at this version').optional(),
  })
  .strict();

/*
 * An MCP server as a write gives it: `env`/`headers` are write-only secrets (never returned),
 * so leaving them out must stay distinguishable from `{}` (no default here): left out keeps the
 * stored values, null or {} removes them.
 */
const [StdioServer, HttpServer] = McpServerConfigSchema.options;
const McpServerWrite = z.union([
  StdioServer.extend({
    env: z.record(z.string(), z.string()).nullable().optional().meta({
      description:
        'Write-only (never returned; `env_set`/`env_names` say what is stored). Left out: the stored values are kept; null: removed.',
    }),
  }),
  HttpServer.extend({
    headers: z.record(z.string(), z.string()).nullable().optional().meta({
      description:
        'Write-only (never returned; `headers_set`/`header_names` say what is stored). Left out: the stored values are kept; null: removed.',
    }),
  }),
]);
const mcpServersWrite = { mcp_servers: z.array(McpServerWrite).optional() };

export const CreateAgentBody = AgentDefinitionFieldsSchema.extend({
  name: AgentNameSchema,
  ...mcpServersWrite,
}).meta({ id: 'AgentDefinition', description: 'An agent definition, as an agent file holds it' });

export const PutAgentBody = AgentDefinitionFieldsSchema.extend({
  ...mcpServersWrite,
  expected_version: ExpectedVersion.optional(),
});

export const AgentBody = AgentViewSchema.meta({ id: 'Agent' });
export const AgentListBody = z.object({ agents: z.array(AgentBody) });

const providerFields = {
  kind: z.enum(PROVIDER_KINDS),
  model: z.string().meta({ description: 'Its default model' }),
  models: z.array(z.string()).optional().meta({ description: 'Further models it serves' }),
  api_key: z.string().nullable().optional().meta({
    description:
      'Write-only: never returned. Omitted on PUT: the stored key is kept; null: removed.',
  }),
  base_url: z.string().optional(),
  priority: z.number().int().optional().meta({ description: 'Lower wins; default 100' }),
  enabled: z.boolean().optional(),
  temperature: z.number().optional(),
  max_tokens: z.number().int().optional(),
  max_retries: z.number().int().optional(),
  timeout_ms: z.number().int().optional(),
};

export const CreateProviderBody = z
  .strictObject({ id: z.string(), ...providerFields })
  .meta({ id: 'ProviderDefinition' });
export const PutProviderBody = z.strictObject({
  id: z.string().optional(),
  ...providerFields,
  expected_version: ExpectedVersion.optional(),
});

export const ProviderBody = z
  .object({
    id: z.string(),
    kind: ProviderViewSchema.shape.kind,
    model: z.string(),
    models: z.array(z.string()),
    base_url: z.string().nullable(),
    priority: z.number().int(),
    enabled: z.boolean(),
    temperature: z.number().nullable(),
    max_tokens: z.number().int().nullable(),
    max_retries: z.number().int(),
    timeout_ms: z.number().int(),
    api_key_set: z.boolean().meta({ description: 'Whether a key is stored (never the key)' }),
    source: ProviderViewSchema.shape.source,
    read_only: z.boolean(),
    version: z.number().int().nullable(),
    created_at: z.string().nullable(),
    updated_at: z.string().nullable(),
  })
  .meta({ id: 'Provider' });
export const ProviderListBody = z.object({ providers: z.array(ProviderBody) });
