import type { ApiServices, AuthConfig, Caller } from '@cognition/api';
import {
  ApiError,
  appRouter,
  createApiContext,
  createCaller,
  resolveCaller,
  retryAfterOf,
  scopeHeaderName,
  toHttpError,
  toTRPCError,
} from '@cognition/api';
import { ARTIFACT_MAX_BYTES_DEFAULT, toFieldIssues } from '@cognition/contracts';
import { formatSseFrame } from '@cognition/runtime';
import { createExpressMiddleware } from '@trpc/server/adapters/express';
import cors from 'cors';
import express from 'express';
import type { ErrorRequestHandler, Express, Request, RequestHandler, Response } from 'express';
import type { Logger } from 'pino';
import { once } from 'node:events';
import { z } from 'zod';
import { buildOpenApiDocument } from './openapi';
import type { CallerPolicy, RestRoute, StreamResult } from './rest/route';
import { expressPath, isStreamResult } from './rest/route';
import { REST_ROUTES } from './rest/routes';
import { MESSAGE_ID_HEADER, RUN_ID_HEADER } from './rest/run-routes';
import { requestIdOf, requestLog, requestLogging } from './request-log';
import { trpcMessageStreamMiddleware } from './trpc-message-stream';
import { trpcRunEventsMiddleware } from './trpc-sse';
import { adminRouter } from './admin';
import type { ServerMetrics } from './telemetry/metrics';
import { METRICS_PATH, httpTelemetry, metricsRoute } from './telemetry/http';

/** What the HTTP layer needs from the configuration. */
export interface HttpConfig {
  scoping: { enabled: boolean; keys: string[] };
  apiKeys: AuthConfig['apiKeys'];
  corsOrigins: string[];
  maxBodyBytes: number;
  /** Largest artifact content (decoded); the artifact routes' body limit follows it. */
  artifactMaxBytes?: number;
  sse: SseHttpConfig;
}

/** How the REST event streams are written. */
export interface SseHttpConfig {
  /** Sent first as `retry: <ms>`: how long EventSource clients wait before reconnecting. */
  retryMs: number;
  /** Interval of `: ping` comments keeping idle proxies from closing the stream. */
  heartbeatMs: number;
}

/** Mutable process state the HTTP layer reads: flipped by graceful shutdown. */
export interface ServerState {
  shuttingDown: boolean;
}

export interface AppOptions {
  config: HttpConfig;
  services: ApiServices;
  logger: Logger;
  state?: ServerState;
  /** Where the dashboard's built assets are; served under /admin when given. */
  adminDir?: string;
  /** Prometheus series (served on `/metrics`) and the metrics token; none: no `/metrics`. */
  telemetry?: AppTelemetry;
}

/** What the HTTP layer needs of the server's telemetry. */
export interface AppTelemetry {
  metrics: ServerMetrics | null;
  /** `COGNITION_METRICS_TOKEN`: scrapes send it as a bearer token instead of an API key. */
  metricsToken: string | null;
  /** A trace pipeline runs: each request gets a server span. */
  tracingOn?: boolean;
}

/** Headers every response carries, whatever produced it. */
export const SECURITY_HEADERS: Record<string, string> = {
  'X-Content-Type-Options': 'nosniff',
  'X-Frame-Options': 'DENY',
  'Referrer-Policy': 'no-referrer',
  // Responses are tenant-specific; shared caches must not keep them.
  'Cache-Control': 'no-store',
};

/**
 * Builds the Express application: logging with request ids, security headers, CORS, `/trpc`,
 * the REST compatibility routes, `/openapi.json`, and error handling that never answers a
 * caller's mistake with a 500. No I/O happens here; the caller owns storage and the listener.
 */
export function createApp(options: AppOptions): Express {
  const { config, services, logger } = options;
  const state = options.state ?? { shuttingDown: false };
  const auth: AuthConfig = { scoping: config.scoping, apiKeys: config.apiKeys };
  const app = express();
  app.disable('x-powered-by');
  app.set('query parser', 'simple');
  app.set('etag', false);

  app.use(requestLogging(logger));

  const metrics = options.telemetry?.metrics ?? null;
  // Request metrics and the request's span, for everything below (after the request id is set).
  const tracingOn = options.telemetry?.tracingOn ?? false;
  if (metrics || tracingOn) app.use(httpTelemetry(metrics, tracingOn));

  app.use((_req, res, next) => {
    for (const [name, value] of Object.entries(SECURITY_HEADERS)) res.setHeader(name, value);
    // While draining, tell keep-alive clients to reconnect elsewhere.
    if (state.shuttingDown) res.setHeader('Connection', 'close');
    next();
  });

  if (config.corsOrigins.length > 0) {
    app.use(
      cors({
        origin: config.corsOrigins.includes('*') ? '*' : config.corsOrigins,
        methods: ['GET', 'POST', 'PATCH', 'DELETE', 'OPTIONS'],
        allowedHeaders: [
          'Content-Type',
          'Authorization',
          'Last-Event-ID',
          'X-Request-Id',
          'trpc-accept',
          ...config.scoping.keys.map(scopeHeaderName),
        ],
        exposedHeaders: ['X-Request-Id', RUN_ID_HEADER, MESSAGE_ID_HEADER],
        maxAge: 600,
      }),
    );
  }

  app.use(
    '/trpc',
    // The hot streams bypass tRPC's fetch-style adapter (see trpc-sse.ts and
    // trpc-message-stream.ts); every other /trpc request goes on to the adapter.
    trpcRunEventsMiddleware({ auth, services, ...(metrics ? { metrics } : {}) }),
    trpcMessageStreamMiddleware({
      auth,
      services,
      maxBodyBytes: config.maxBodyBytes,
      ...(metrics ? { metrics } : {}),
    }),
    createExpressMiddleware({
      router: appRouter,
      maxBodySize: config.maxBodyBytes,
      createContext({ req }) {
        try {
          return createApiContext(services, resolveCaller(req.headers, auth), requestIdOf(req));
        } catch (error) {
          throw toTRPCError(error);
        }
      },
      onError({ error, req }) {
        if (error.code === 'INTERNAL_SERVER_ERROR') {
          requestLog(req).error({ err: error.cause ?? error }, 'tRPC procedure failed');
        }
      },
      // A rate-limit refusal says when to come back, as on REST.
      responseMeta({ errors }) {
        const retryAfter = errors.map(retryAfterOf).find((s) => s !== undefined);
        return retryAfter === undefined ? {} : { headers: { 'Retry-After': String(retryAfter) } };
      },
    }),
  );

  const jsonBody = express.json({
    limit: config.maxBodyBytes,
    // Every REST body is JSON whatever the Content-Type says: the original Cognition's curl
    // examples send `-d '{...}'` without a JSON content type.
    type: () => true,
  });

  const artifactJsonBody = express.json({
    // base64 is 4/3 of the bytes; the rest of the body (name, metadata) fits in the slack.
    limit: Math.max(
      config.maxBodyBytes,
      Math.ceil(((config.artifactMaxBytes ?? ARTIFACT_MAX_BYTES_DEFAULT) * 4) / 3) + 64 * 1024,
    ),
    type: () => true,
  });

  for (const route of REST_ROUTES) {
    const parser = route.request.bodyLimit === 'artifact' ? artifactJsonBody : jsonBody;
    const handlers: RequestHandler[] = route.request.body ? [parser] : [];
    handlers.push(restHandler(route, { auth, services, state, sse: config.sse, metrics }));
    app[route.method](expressPath(route.path), ...handlers);
  }

  const openApiDocument = buildOpenApiDocument({
    version: services.version,
    scopeKeys: config.scoping.enabled ? config.scoping.keys : [],
    apiKeys: config.apiKeys.length > 0,
    ...(metrics ? { metrics: { token: (options.telemetry?.metricsToken ?? null) !== null } } : {}),
  });
  app.get('/openapi.json', (req, res) => {
    try {
      identify(req, 'key', auth);
      res.json(openApiDocument);
    } catch (error) {
      const { status, body } = toHttpError(error);
      sendError(res, status, body);
    }
  });

  if (metrics) {
    app.get(
      METRICS_PATH,
      metricsRoute({
        metrics,
        token: options.telemetry?.metricsToken ?? null,
        authorize: (req) => identify(req, 'key', auth),
        sendError(res, error) {
          const { status, body } = toHttpError(error);
          sendError(res, status, body);
        },
      }),
    );
  }

  if (options.adminDir !== undefined) app.use('/admin', adminRouter(options.adminDir));

  app.use((req, res) => {
    sendError(res, 404, { detail: `Not found: ${req.method} ${req.path}`, code: 'NOT_FOUND' });
  });
  app.use(errorHandler);
  return app;
}

interface RouteDeps {
  auth: AuthConfig;
  services: ApiServices;
  state: ServerState;
  sse: SseHttpConfig;
  metrics: ServerMetrics | null;
}

function restHandler(route: RestRoute, deps: RouteDeps): RequestHandler {
  return async (req, res) => {
    // Client gone before the response ended: ends event subscriptions, never the run itself.
    const gone = new AbortController();
    res.once('close', () => {
      if (!res.writableFinished) gone.abort();
    });
    try {
      const { caller, identified } = identify(req, route.caller, deps.auth);
      const params = validate(route.request.params, req.params, 'path');
      const { declared, extra } = splitQuery(req.query as Record<string, string | string[]>, route);
      const query = validate(route.request.query, declared, 'query');
      const body = route.request.body
        ? validate(route.request.body, (req.body as unknown) ?? {}, 'body')
        : undefined;
      const api = createCaller(createApiContext(deps.services, caller, requestIdOf(req)), {
        signal: gone.signal,
      });
      const result = await route.handle({
        params,
        query,
        body,
        extraQuery: extra,
        api,
        identified,
        shuttingDown: deps.state.shuttingDown,
        headers: req.headers,
        signal: gone.signal,
      });
      if (isStreamResult(result)) {
        const release = deps.metrics?.trackStream('rest_sse');
        try {
          await writeEventStream(req, res, result, deps.sse, gone.signal);
        } finally {
          release?.();
        }
      } else if (result.body === undefined) res.status(result.status).end();
      else res.status(result.status).json(result.body);
    } catch (error) {
      const { status, body } = toHttpError(error);
      if (status >= 500) requestLog(req).error({ err: error }, 'request failed');
      const retryAfter = retryAfterOf(error);
      if (retryAfter !== undefined && !res.headersSent) {
        res.setHeader('Retry-After', String(retryAfter));
      }
      sendError(res, status, restFieldPaths(body, route));
    }
  };
}

const REQUEST_PARTS = ['path', 'query', 'body', 'headers'];

/**
 * Field issues raised past the REST schemas (by a procedure's input schema or the domain, e.g.
 * `callbackUrl` refused by the runtime) name the procedure's camelCase input fields; REST
 * callers sent snake_case fields in a request part, so they are named the way the REST
 * validation names its own (`body.callback_url`).
 */
function restFieldPaths<T extends { errors?: { path: string; message: string }[] }>(
  body: T,
  route: RestRoute,
): T {
  if (!body.errors) return body;
  const part = route.request.body ? 'body' : 'query';
  let renamed = false;
  const errors = body.errors.map((issue) => {
    const [first = ''] = issue.path.split('.');
    if (REQUEST_PARTS.includes(first)) return issue;
    renamed = true;
    const snake = issue.path.replace(/[A-Z]/g, (letter) => `_${letter.toLowerCase()}`);
    return { ...issue, path: `${part}.${snake}` };
  });
  if (!renamed) return body;
  // The detail named the fields too; it is rebuilt like the REST validation's own.
  const detail = `Invalid ${part}: ${errors.map((e) => `${e.path}: ${e.message}`).join('; ')}`;
  return { ...body, detail, errors };
}

/**
 * Writes an event stream: headers, the `retry:` hint, one frame per envelope, `: ping`
 * heartbeats, honouring backpressure; ends the response when the events end. A client that
 * disconnects stops the iteration (whose `return()` releases the subscription).
 */
async function writeEventStream(
  req: Request,
  res: Response,
  result: StreamResult,
  sse: SseHttpConfig,
  gone: AbortSignal,
): Promise<void> {
  res.status(result.status);
  res.setHeader('Content-Type', 'text/event-stream');
  res.setHeader('Cache-Control', 'no-cache');
  res.setHeader('X-Accel-Buffering', 'no');
  if (!res.hasHeader('Connection')) res.setHeader('Connection', 'keep-alive');
  for (const [name, value] of Object.entries(result.headers ?? {})) res.setHeader(name, value);
  res.flushHeaders();
  res.write(`retry: ${sse.retryMs}\n\n`);
  const heartbeat = setInterval(() => {
    if (!res.destroyed) res.write(': ping\n\n');
  }, sse.heartbeatMs);
  let events = 0;
  try {
    for await (const envelope of result.events) {
      if (gone.aborted || res.destroyed) break;
      events += 1;
      if (!res.write(formatSseFrame(envelope))) {
        // A slow client: wait for the socket to drain instead of buffering without bound.
        await Promise.race([once(res, 'drain'), once(res, 'close')]);
      }
    }
  } catch (error) {
    // Headers are gone: the client sees the stream end and resumes with Last-Event-ID.
    requestLog(req).error({ err: error, events }, 'event stream failed');
  } finally {
    clearInterval(heartbeat);
  }
  if (!res.destroyed) res.end();
  requestLog(req).debug({ events, clientGone: gone.aborted }, 'event stream ended');
}

function identify(
  req: Request,
  policy: CallerPolicy,
  auth: AuthConfig,
): { caller: Caller; identified: boolean } {
  if (policy === 'required') return { caller: resolveCaller(req.headers, auth), identified: true };
  const caller = resolveCaller(req.headers, auth, { requireAuth: false });
  const keyed = auth.apiKeys.length === 0 || caller.apiKeyId !== undefined;
  if (policy === 'key' && !keyed) {
    throw new ApiError('UNAUTHORIZED', 'Missing API key: send Authorization: Bearer <key>');
  }
  const scoped =
    !auth.scoping.enabled || auth.scoping.keys.every((key) => caller.scope[key] !== undefined);
  return { caller, identified: keyed && scoped };
}

function splitQuery(
  query: Record<string, string | string[]>,
  route: RestRoute,
): { declared: Record<string, string | string[]>; extra: Record<string, string | string[]> } {
  const prefix = route.request.extraQueryPrefix;
  const isExtra = ([name]: [string, unknown]) =>
    prefix !== undefined && name.startsWith(prefix) && name.length > prefix.length;
  const entries = Object.entries(query);
  // fromEntries defines own properties, so a `__proto__` parameter is validated, not swallowed.
  return {
    declared: Object.fromEntries(entries.filter((entry) => !isExtra(entry))),
    extra: Object.fromEntries(entries.filter(isExtra)),
  };
}

function validate<T extends z.ZodType | undefined>(
  schema: T,
  value: unknown,
  where: 'path' | 'query' | 'body',
): T extends z.ZodType ? z.output<T> : Record<string, never> {
  type Out = T extends z.ZodType ? z.output<T> : Record<string, never>;
  const effective = schema ?? z.object({}).strict();
  const result = effective.safeParse(value);
  if (result.success) return result.data as Out;
  const issues = toFieldIssues(result.error).map((issue) => ({
    path: issue.path === '(root)' ? where : `${where}.${issue.path}`,
    message: issue.message,
  }));
  throw new ApiError(
    'VALIDATION_ERROR',
    `Invalid ${where}: ${issues.map((i) => `${i.path}: ${i.message}`).join('; ')}`,
    { issues },
  );
}

function sendError(
  res: Response,
  status: number,
  body: { detail: string; code: string; errors?: unknown },
): void {
  if (res.headersSent) {
    res.end();
    return;
  }
  res.status(status).json(body);
}

/** body-parser's errors carry an HTTP status and a `type`; everything else is ours to classify. */
interface BodyParserError extends Error {
  status?: number;
  type?: string;
}

const errorHandler: ErrorRequestHandler = (error: BodyParserError, req, res, _next) => {
  switch (error.type ?? 'unknown') {
    case 'entity.too.large':
      sendError(res, 413, {
        detail: `Request body exceeds the limit of ${(error as { limit?: number }).limit ?? 'the configured'} bytes`,
        code: 'PAYLOAD_TOO_LARGE',
      });
      return;
    case 'entity.parse.failed':
      sendError(res, 400, {
        detail: `Malformed JSON body: ${error.message}`,
        code: 'VALIDATION_ERROR',
      });
      return;
    case 'encoding.unsupported':
    case 'charset.unsupported':
      sendError(res, 415, { detail: error.message, code: 'VALIDATION_ERROR' });
      return;
    case 'request.aborted':
    case 'request.size.invalid':
    case 'stream.encoding.set':
      sendError(res, 400, { detail: error.message, code: 'VALIDATION_ERROR' });
      return;
    default: {
      const { status, body } = toHttpError(error);
      if (status >= 500) requestLog(req).error({ err: error }, 'request failed');
      sendError(res, status, body);
    }
  }
};
