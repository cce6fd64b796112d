import { scopeHeaderName } from '@cognition/api';
import type { RouteConfig } from '@asteasolutions/zod-to-openapi';
import { OpenAPIRegistry, OpenApiGeneratorV31 } from '@asteasolutions/zod-to-openapi';
import { z } from 'zod';
import { REST_ROUTES } from './rest/routes';
import { ErrorBodySchema } from './rest/schemas';

export interface OpenApiOptions {
  version: string;
  /** Scope keys in force; each becomes a required `X-Cognition-Scope-<Key>` header parameter. */
  scopeKeys: string[];
  /** Whether API keys are configured (adds bearer security to the routes that need it). */
  apiKeys: boolean;
  /**
   * `/metrics` when served: `token` when it takes `COGNITION_METRICS_TOKEN` instead of an API
   * key. Absent: not served, not documented.
   */
  metrics?: { token: boolean };
}

export type OpenApiDocument = ReturnType<OpenApiGeneratorV31['generateDocument']>;

/**
 * The OpenAPI 3.1 document of the REST surface, generated from the same zod schemas the routes
 * validate with, for the configuration the server runs with (scope headers, bearer auth).
 */
export function buildOpenApiDocument(options: OpenApiOptions): OpenApiDocument {
  const registry = new OpenAPIRegistry();
  if (options.apiKeys) {
    registry.registerComponent('securitySchemes', 'bearerAuth', {
      type: 'http',
      scheme: 'bearer',
      description: 'One of the keys in COGNITION_API_KEYS',
    });
  }
  const scopeHeaders =
    options.scopeKeys.length > 0
      ? z.object(
          Object.fromEntries(
            options.scopeKeys.map((key) => [
              scopeHeaderName(key),
              z
                .string()
                .min(1)
                .max(2048)
                .meta({ description: `Caller's ${key} scope` }),
            ]),
          ),
        )
      : undefined;

  for (const route of REST_ROUTES) {
    const request: NonNullable<RouteConfig['request']> = {};
    if (route.request.params) request.params = route.request.params;
    if (route.request.query) request.query = route.request.query;
    if (route.request.body) {
      request.body = {
        required: true,
        content: { 'application/json': { schema: route.request.body } },
      };
    }
    const headers = [
      ...(scopeHeaders && route.caller === 'required' ? [scopeHeaders] : []),
      ...(route.request.headers ? [route.request.headers] : []),
    ];
    if (headers.length > 0) request.headers = headers;
    const responses: RouteConfig['responses'] = {};
    for (const [status, spec] of Object.entries(route.responses)) {
      responses[status] = spec.schema
        ? {
            description: spec.description,
            content: { [spec.contentType ?? 'application/json']: { schema: spec.schema } },
          }
        : { description: spec.description };
    }
    registry.registerPath({
      method: route.method,
      path: route.path,
      operationId: route.operationId,
      summary: route.summary,
      ...(route.description !== undefined ? { description: route.description } : {}),
      tags: [route.tag],
      ...(options.apiKeys && route.caller !== 'optional' ? { security: [{ bearerAuth: [] }] } : {}),
      request,
      responses,
    });
  }

  registry.registerPath({
    method: 'get',
    path: '/openapi.json',
    operationId: 'openapi',
    summary: 'This document',
    tags: ['operations'],
    ...(options.apiKeys ? { security: [{ bearerAuth: [] }] } : {}),
    responses: {
      200: {
        description: 'OpenAPI 3.1 document',
        content: { 'application/json': { schema: z.record(z.string(), z.unknown()) } },
      },
      ...(options.apiKeys
        ? {
            401: {
              description: 'Missing or invalid API key',
              content: { 'application/json': { schema: ErrorBodySchema } },
            },
          }
        : {}),
    },
  });

  if (options.metrics) registerMetricsPath(registry, options.apiKeys, options.metrics.token);

  return new OpenApiGeneratorV31(registry.definitions).generateDocument({
    openapi: '3.1.0',
    info: {
      title: 'Cognition REST API',
      version: options.version,
      description:
        'REST compatibility surface of Cognition (snake_case, the original paths). The typed ' +
        'tRPC API is served under /trpc. Errors are {detail, code, errors}.',
    },
  });
}

/** `GET /metrics` (docs/observability.md): Prometheus text, a bearer token or an API key. */
function registerMetricsPath(registry: OpenAPIRegistry, apiKeys: boolean, token: boolean): void {
  if (token) {
    registry.registerComponent('securitySchemes', 'metricsToken', {
      type: 'http',
      scheme: 'bearer',
      description: 'COGNITION_METRICS_TOKEN',
    });
  }
  const security = token ? [{ metricsToken: [] }] : apiKeys ? [{ bearerAuth: [] }] : [];
  const error = (description: string) => ({
    description,
    content: { 'application/json': { schema: ErrorBodySchema } },
  });
  registry.registerPath({
    method: 'get',
    path: '/metrics',
    operationId: 'metrics',
    summary: 'Prometheus metrics of this process',
    description:
      'Prometheus text exposition format (0.0.4): HTTP requests by route pattern, runs, turn ' +
      'latency, time to first token, tokens and cost by provider/model, streams, run admission, ' +
      'sandbox executions, circuit breakers, storage latency and process metrics. Takes no ' +
      'query parameters. See docs/observability.md.',
    tags: ['operations'],
    ...(security.length > 0 ? { security } : {}),
    responses: {
      200: {
        description: 'The metrics',
        content: { 'text/plain': { schema: z.string() } },
      },
      ...(token || apiKeys
        ? { 401: error(token ? 'Missing or invalid metrics token' : 'Missing or invalid API key') }
        : {}),
      422: error('A query parameter was given (the error names it)'),
    },
  });
}
