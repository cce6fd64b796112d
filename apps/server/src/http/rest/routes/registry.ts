import { ApiError } from '@cognition/api';
import type { ProviderView } from '@cognition/contracts';
import type { z } from 'zod';
import type { RestRoute } from '../route';
import { defineRoute } from '../route';
import { errorResponse, INVALID } from '../responses';
import {
  AgentBody,
  AgentListBody,
  AgentNameParams,
  CreateAgentBody,
  CreateProviderBody,
  ExpectedVersionQuery,
  ProviderBody,
  ProviderIdParams,
  ProviderListBody,
  PutAgentBody,
  PutProviderBody,
} from '../schemas/registry';

/*
 * The configuration registry on REST: agents and providers, global (not per tenant), each route a
 * thin adapter over one tRPC procedure. Reads need a valid key (when keys are configured) but no
 * scope headers; writes need an admin key.
 */

const KEY_ERRORS = {
  401: errorResponse('Missing or invalid API key (when API keys are configured)'),
};
const WRITE_ERRORS = {
  ...KEY_ERRORS,
  400: errorResponse('Malformed JSON body'),
  403: errorResponse('Not an admin key (COGNITION_ADMIN_API_KEYS)'),
  413: errorResponse('Body larger than COGNITION_MAX_BODY_BYTES'),
  422: INVALID,
};
const READ_ONLY = errorResponse(
  'VERSION_CONFLICT: expected_version is stale; CONFLICT: the name exists, or is a built-in or configured (read-only) entry',
);

/** A name in the body must be the one the path addresses (a PUT never renames). */
function samePathName(field: string, inBody: string | undefined, inPath: string): void {
  if (inBody === undefined || inBody === inPath) return;
  throw new ApiError('VALIDATION_ERROR', `Invalid body: body.${field}: must be "${inPath}"`, {
    issues: [{ path: `body.${field}`, message: `must be "${inPath}" (the path's)` }],
  });
}

/** snake_case REST provider fields -> the providers file's camelCase document. */
const PROVIDER_FIELDS: Record<string, string> = {
  api_key: 'apiKey',
  base_url: 'baseUrl',
  max_tokens: 'maxTokens',
  max_retries: 'maxRetries',
  timeout_ms: 'timeoutMs',
};

function providerDocument(body: Record<string, unknown>): Record<string, unknown> {
  return Object.fromEntries(
    Object.entries(body)
      .filter(([key, value]) => key !== 'expected_version' && value !== undefined)
      .map(([key, value]) => [PROVIDER_FIELDS[key] ?? key, value]),
  );
}

function providerToBody(p: ProviderView): z.infer<typeof ProviderBody> {
  return {
    id: p.id,
    kind: p.kind,
    model: p.model,
    models: p.models,
    base_url: p.baseUrl,
    priority: p.priority,
    enabled: p.enabled,
    temperature: p.temperature,
    max_tokens: p.maxTokens,
    max_retries: p.maxRetries,
    timeout_ms: p.timeoutMs,
    api_key_set: p.apiKeySet,
    source: p.source,
    read_only: p.readOnly,
    version: p.version,
    created_at: p.createdAt,
    updated_at: p.updatedAt,
  };
}

const AGENT_EXAMPLE = {
  name: 'reviewer',
  description: 'Reviews pull requests',
  tools: ['ls', 'read_file', 'grep'],
  temperature: 0.2,
  system_prompt: 'You review code and explain every finding.',
};

export const REGISTRY_ROUTES: RestRoute[] = [
  defineRoute({
    method: 'get',
    path: '/agents',
    operationId: 'listAgents',
    summary: 'List agents',
    description:
      'Every agent in force: built-in, file-defined (read-only) and registry (`source: api`) ones.',
    tag: 'registry',
    caller: 'key',
    request: {},
    responses: { 200: { description: 'The agents', schema: AgentListBody }, ...KEY_ERRORS },
    async handle({ api }) {
      return { status: 200, body: { agents: await api.agents.list() } };
    },
  }),
  defineRoute({
    method: 'post',
    path: '/agents',
    operationId: 'createAgent',
    summary: 'Create an agent (admin)',
    description:
      'Validated exactly like an agent file (unknown tool, model no enabled provider serves, ' +
      'temperature out of range: 422 naming the field). Applies to the next run on every node.',
    tag: 'registry',
    caller: 'key',
    request: { body: CreateAgentBody, examples: { reviewer: AGENT_EXAMPLE } },
    responses: {
      201: { description: 'The created agent (version 1)', schema: AgentBody },
      ...WRITE_ERRORS,
      409: READ_ONLY,
    },
    async handle({ api, body }) {
      return { status: 201, body: await api.agents.create(body) };
    },
  }),
  defineRoute({
    method: 'get',
    path: '/agents/{name}',
    operationId: 'getAgent',
    summary: 'Get an agent',
    tag: 'registry',
    caller: 'key',
    request: { params: AgentNameParams },
    responses: {
      200: { description: 'The agent', schema: AgentBody },
      ...KEY_ERRORS,
      404: errorResponse('No such agent'),
      422: INVALID,
    },
    async handle({ api, params }) {
      return { status: 200, body: await api.agents.get({ name: params.name }) };
    },
  }),
  defineRoute({
    method: 'put',
    path: '/agents/{name}',
    operationId: 'putAgent',
    summary: 'Create or replace an agent (admin)',
    description:
      'Replaces the whole definition (201 when it created the agent). With `expected_version` ' +
      'only the agent at exactly that version is replaced (409 otherwise, 404 when missing).',
    tag: 'registry',
    caller: 'key',
    request: {
      params: AgentNameParams,
      body: PutAgentBody,
      examples: {
        replace: {
          description: AGENT_EXAMPLE.description,
          tools: AGENT_EXAMPLE.tools,
          system_prompt: 'Review briefly.',
          expected_version: 1,
        },
      },
    },
    responses: {
      200: { description: 'The replaced agent', schema: AgentBody },
      201: { description: 'The created agent', schema: AgentBody },
      ...WRITE_ERRORS,
      404: errorResponse('expected_version given and no such agent'),
      409: READ_ONLY,
    },
    async handle({ api, params, body }) {
      samePathName('name', body.name, params.name);
      const agent = await api.agents.update({ ...body, name: params.name });
      return { status: agent.version === 1 ? 201 : 200, body: agent };
    },
  }),
  defineRoute({
    method: 'delete',
    path: '/agents/{name}',
    operationId: 'deleteAgent',
    summary: 'Delete an agent (admin)',
    description:
      'Sessions bound to it stay; a message sent to one is then 409 naming the missing agent.',
    tag: 'registry',
    caller: 'key',
    request: { params: AgentNameParams, query: ExpectedVersionQuery },
    responses: {
      204: { description: 'Deleted' },
      ...KEY_ERRORS,
      403: errorResponse('Not an admin key (COGNITION_ADMIN_API_KEYS)'),
      404: errorResponse('No such agent'),
      409: READ_ONLY,
      422: INVALID,
    },
    async handle({ api, params, query }) {
      await api.agents.delete({
        name: params.name,
        ...(query.expected_version !== undefined
          ? { expected_version: query.expected_version }
          : {}),
      });
      return { status: 204 };
    },
  }),
  defineRoute({
    method: 'get',
    path: '/providers',
    operationId: 'listProviders',
    summary: 'List LLM providers',
    description:
      'Every provider in force: configured (read-only) and registry ones. API keys are never ' +
      'returned (`api_key_set` says whether one is stored).',
    tag: 'registry',
    caller: 'key',
    request: {},
    responses: { 200: { description: 'The providers', schema: ProviderListBody }, ...KEY_ERRORS },
    async handle({ api }) {
      return { status: 200, body: { providers: (await api.providers.list()).map(providerToBody) } };
    },
  }),
  defineRoute({
    method: 'post',
    path: '/providers',
    operationId: 'createProvider',
    summary: 'Create an LLM provider (admin)',
    description: 'Validated like an entry of the providers file. Applies to the next run.',
    tag: 'registry',
    caller: 'key',
    request: {
      body: CreateProviderBody,
      examples: {
        local: {
          id: 'local-vllm',
          kind: 'openai_compatible',
          model: 'llama-3.1-8b',
          base_url: 'http://vllm.internal:8000/v1',
        },
      },
    },
    responses: {
      201: { description: 'The created provider', schema: ProviderBody },
      ...WRITE_ERRORS,
      409: READ_ONLY,
    },
    async handle({ api, body }) {
      const provider = await api.providers.create(providerDocument(body));
      return { status: 201, body: providerToBody(provider) };
    },
  }),
  defineRoute({
    method: 'get',
    path: '/providers/{id}',
    operationId: 'getProvider',
    summary: 'Get an LLM provider',
    tag: 'registry',
    caller: 'key',
    request: { params: ProviderIdParams },
    responses: {
      200: { description: 'The provider', schema: ProviderBody },
      ...KEY_ERRORS,
      404: errorResponse('No such provider'),
      422: INVALID,
    },
    async handle({ api, params }) {
      return { status: 200, body: providerToBody(await api.providers.get({ id: params.id })) };
    },
  }),
  defineRoute({
    method: 'put',
    path: '/providers/{id}',
    operationId: 'putProvider',
    summary: 'Create or replace an LLM provider (admin)',
    description:
      'Replaces the whole entry (201 when it created it); without `api_key` the stored key is ' +
      'kept. With `expected_version` only that version is replaced.',
    tag: 'registry',
    caller: 'key',
    request: { params: ProviderIdParams, body: PutProviderBody },
    responses: {
      200: { description: 'The replaced provider', schema: ProviderBody },
      201: { description: 'The created provider', schema: ProviderBody },
      ...WRITE_ERRORS,
      404: errorResponse('expected_version given and no such provider'),
      409: READ_ONLY,
    },
    async handle({ api, params, body }) {
      samePathName('id', body.id, params.id);
      const provider = await api.providers.update({
        ...providerDocument(body),
        id: params.id,
        ...(body.expected_version !== undefined ? { expectedVersion: body.expected_version } : {}),
      });
      return { status: provider.version === 1 ? 201 : 200, body: providerToBody(provider) };
    },
  }),
  defineRoute({
    method: 'delete',
    path: '/providers/{id}',
    operationId: 'deleteProvider',
    summary: 'Delete an LLM provider (admin)',
    description:
      'Sessions and agents naming its models then fail their next run with PROVIDER_CONFIG_ERROR.',
    tag: 'registry',
    caller: 'key',
    request: { params: ProviderIdParams, query: ExpectedVersionQuery },
    responses: {
      204: { description: 'Deleted' },
      ...KEY_ERRORS,
      403: errorResponse('Not an admin key (COGNITION_ADMIN_API_KEYS)'),
      404: errorResponse('No such provider'),
      409: READ_ONLY,
      422: INVALID,
    },
    async handle({ api, params, query }) {
      await api.providers.delete({
        id: params.id,
        ...(query.expected_version !== undefined
          ? { expectedVersion: query.expected_version }
          : {}),
      });
      return { status: 204 };
    },
  }),
];
