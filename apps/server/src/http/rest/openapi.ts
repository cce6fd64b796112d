import { scopeHeaderName } from '@cognition/api';
import type { RouteConfig } from '@asteasolutions/zod-to-openapi';
import { OpenAPIRegistry, OpenApiGeneratorV31 } from '@asteasolutions/zod-to-openapi';
import { z } from 'zod';
import { REST_ROUTES } from './routes';
import { LandingBody } from '../landing';
import { ErrorBodySchema } from './schemas/common';

export interface OpenApiOptions {
  version: string;
  /** Scope keys in force; each becomes a required `X-Cognition-Scope-<Key>` header parameter. */
  scopeKeys: string[];
  /**
   * Whether API keys are configured. The `bearerAuth` scheme is declared either way (so generated
   * clients always have a place for the key); without keys the routes say it is optional.
   */
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
  registry.registerComponent('securitySchemes', 'bearerAuth', {
    type: 'http',
    scheme: 'bearer',
    description: options.apiKeys
      ? 'One of the keys in COGNITION_API_KEYS (or COGNITION_ADMIN_API_KEYS)'
      : 'One of the keys in COGNITION_API_KEYS. None is configured on this server, so the key ' +
        'is optional (`security` lists `{}` as an alternative)',
  });
  // With keys: the key is required. Without: optional (the `{}` alternative), so the document
  // has the same shape whatever the configuration.
  const keySecurity: Record<string, string[]>[] = options.apiKeys
    ? [{ bearerAuth: [] }]
    : [{ bearerAuth: [] }, {}];
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
      ...(route.caller !== 'optional' ? { security: keySecurity } : {}),
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
    security: keySecurity,
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

  registry.registerPath({
    method: 'get',
    path: '/',
    operationId: 'landing',
    summary: 'Where things are',
    description:
      'A browser (Accept prefers text/html) is redirected to the dashboard (302 to /admin/), or ' +
      'gets a page of links when no dashboard is served; other clients get these links as JSON.',
    tags: ['operations'],
    responses: {
      200: {
        description: 'The links (JSON), or a small HTML page',
        content: {
          'application/json': { schema: LandingBody },
          'text/html': { schema: z.string() },
        },
      },
      302: { description: 'A browser, to the dashboard (`Location: /admin/`)' },
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
  const security: Record<string, string[]>[] = token
    ? [{ metricsToken: [] }]
    : apiKeys
      ? [{ bearerAuth: [] }]
      : [];
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

/**
 * `servers` for a request: the origin the client reached this server at — the scheme of the
 * connection (or `X-Forwarded-Proto` from a TLS-terminating proxy) and the `Host` header — so a
 * client generated from the document talks to where the document came from, behind a proxy or
 * not, with no setting. A missing or malformed Host falls back to `/` (relative to the
 * document's own URL, as OpenAPI defines).
 */
export function serversFor(req: {
  headers: Record<string, string | string[] | undefined>;
  secure?: boolean;
}): { url: string; description: string }[] {
  const host = req.headers['host'];
  const forwarded = req.headers['x-forwarded-proto'];
  const proto = (typeof forwarded === 'string' ? forwarded.split(',')[0]?.trim() : undefined) ?? '';
  const scheme = proto === 'https' || proto === 'http' ? proto : req.secure ? 'https' : 'http';
  const description = 'This server, as this document was requested';
  if (typeof host !== 'string' || !HOST_PATTERN.test(host)) return [{ url: '/', description }];
  return [{ url: `${scheme}://${host}`, description }];
}

/** `name[:port]` or `[v6][:port]`: nothing that could turn the URL into something else. */
const HOST_PATTERN = /^(?:[A-Za-z0-9.-]{1,253}|\[[0-9A-Fa-f:.]{2,45}\])(?::\d{1,5})?$/;
