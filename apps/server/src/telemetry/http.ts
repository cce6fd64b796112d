import { ApiError, appRouter } from '@cognition/api';
import { SpanKind, SpanStatusCode, context, propagation, trace } from '@opentelemetry/api';
import type { Request, RequestHandler, Response } from 'express';
import { createHash, timingSafeEqual } from 'node:crypto';
import type { IncomingHttpHeaders } from 'node:http';
import { performance } from 'node:perf_hooks';
import type { ServerMetrics } from './metrics';

/** The baggage entry carrying the request id to every span below the request's. */
const BAGGAGE_REQUEST_ID = 'cognition.request_id';

export const METRICS_PATH = '/metrics';

const PROCEDURES: ReadonlySet<string> = new Set(Object.keys(appRouter._def.procedures));

/**
 * The route pattern of a request, the only path label metrics carry (bounded, no ids):
 * a REST route as documented (`/sessions/{id}/messages`), `/trpc/<procedure>` for a known tRPC
 * procedure (`/trpc/{batch}` for batched calls, `/trpc/{unknown}` otherwise), `/admin` for the
 * dashboard's assets, and `unmatched` for everything else (404s).
 */
export function routePattern(req: Request): string {
  const path = (req.originalUrl.split('?', 1)[0] ?? '').replace(/\/+$/, '');
  if (path === '/trpc' || path.startsWith('/trpc/')) {
    const procedure = decodeSafely(path.slice('/trpc/'.length));
    if (PROCEDURES.has(procedure)) return `/trpc/${procedure}`;
    const batch = procedure.split(',');
    return batch.length > 1 && batch.every((p) => PROCEDURES.has(p))
      ? '/trpc/{batch}'
      : '/trpc/{unknown}';
  }
  if (path === '/admin' || path.startsWith('/admin/')) return '/admin';
  const route = (req as { route?: { path?: unknown } }).route;
  if (typeof route?.path === 'string') return route.path.replace(/:(\w+)/g, '{$1}');
  return 'unmatched';
}

function decodeSafely(text: string): string {
  try {
    return decodeURIComponent(text);
  } catch {
    return text;
  }
}

/** The status answered; a client gone before anything was sent: 499 (nginx's convention). */
function statusOf(res: Response): string {
  return res.headersSent ? String(res.statusCode) : '499';
}

/** The session a `/sessions/{id}/…` request addresses, for its span. */
function sessionIdOf(req: Request, route: string): string | undefined {
  if (!route.startsWith('/sessions/{id}')) return undefined;
  const segment = req.originalUrl.split('?', 1)[0]?.split('/')[2];
  return segment ? decodeSafely(segment) : undefined;
}

/**
 * Measures every request except `/metrics` itself: `cognition_http_requests_total` and
 * `cognition_http_request_duration_seconds` by method, route pattern and status, and — when
 * tracing is on — a server span (`GET /sessions/{id}`) continuing an incoming `traceparent`,
 * with the request id as an attribute and as baggage for every span below it. Must run after
 * the request id is assigned (requestLogging).
 */
export function httpTelemetry(metrics: ServerMetrics | null, tracing: boolean): RequestHandler {
  return (req, res, next) => {
    if (req.path === METRICS_PATH) {
      next();
      return;
    }
    const startedAt = performance.now();
    if (!tracing) {
      res.once('close', () => {
        const route = routePattern(req);
        const labels = { method: req.method, route, status: statusOf(res) };
        metrics?.httpRequests.inc(labels);
        metrics?.httpDuration.observe(labels, (performance.now() - startedAt) / 1000);
      });
      next();
      return;
    }
    const requestId = typeof req.id === 'string' ? req.id : undefined;
    const parent = propagation.extract(context.active(), req.headers);
    const span = trace.getTracer('@cognition/server').startSpan(
      req.method,
      {
        kind: SpanKind.SERVER,
        attributes: {
          'http.request.method': req.method,
          'url.path': req.path,
          ...(requestId ? { 'cognition.request_id': requestId } : {}),
        },
      },
      parent,
    );
    let active = trace.setSpan(parent, span);
    if (requestId) {
      const baggage = (propagation.getBaggage(parent) ?? propagation.createBaggage()).setEntry(
        BAGGAGE_REQUEST_ID,
        { value: requestId },
      );
      active = propagation.setBaggage(active, baggage);
    }
    let ended = false;
    const end = () => {
      if (ended) return;
      ended = true;
      const route = routePattern(req);
      const status = statusOf(res);
      const labels = { method: req.method, route, status };
      metrics?.httpRequests.inc(labels);
      metrics?.httpDuration.observe(labels, (performance.now() - startedAt) / 1000);
      span.updateName(`${req.method} ${route}`);
      span.setAttribute('http.route', route);
      span.setAttribute('http.response.status_code', Number(status));
      const sessionId = sessionIdOf(req, route);
      if (sessionId) span.setAttribute('cognition.session.id', sessionId);
      if (res.statusCode >= 500) span.setStatus({ code: SpanStatusCode.ERROR });
      span.end();
    };
    res.once('finish', end);
    res.once('close', end);
    // Body parsing and stream callbacks run in the socket's async context, not this one: bind
    // the request and response so their listeners see the request's span and baggage.
    context.bind(active, req);
    context.bind(active, res);
    context.with(active, next);
  };
}

export interface MetricsRouteOptions {
  metrics: ServerMetrics;
  /** `COGNITION_METRICS_TOKEN`: when set, scrapes must send `Authorization: Bearer <token>`. */
  token: string | null;
  /** Otherwise: the API's own key check (throws ApiError UNAUTHORIZED). */
  authorize: (req: Request) => void;
  /** Writes an error response the way every other route does. */
  sendError: (res: Response, error: unknown) => void;
}

function digest(text: string): Buffer {
  return createHash('sha256').update(text).digest();
}

function bearerMatches(headers: IncomingHttpHeaders, token: string): boolean {
  const header = headers.authorization;
  const match = typeof header === 'string' ? /^Bearer\s+(\S+)\s*$/i.exec(header) : null;
  // Digests of equal length: the comparison takes the same time whatever was sent.
  return match?.[1] !== undefined && timingSafeEqual(digest(match[1]), digest(token));
}

/**
 * `GET /metrics`: the registry in Prometheus text format. Not tenant data, so a valid API key
 * is enough (no scope headers), or the dedicated token when one is configured. It takes no
 * query parameters: any is a 422 naming it.
 */
export function metricsRoute(options: MetricsRouteOptions): RequestHandler {
  const expectedToken = options.token;
  return async (req, res) => {
    try {
      if (expectedToken !== null) {
        if (!bearerMatches(req.headers, expectedToken)) {
          res.setHeader('WWW-Authenticate', 'Bearer realm="metrics"');
          throw new ApiError(
            'UNAUTHORIZED',
            'Missing or invalid metrics token: send Authorization: Bearer <COGNITION_METRICS_TOKEN>',
          );
        }
      } else {
        options.authorize(req);
      }
      const unknown = Object.keys(req.query);
      if (unknown.length > 0) {
        const issues = unknown.map((name) => ({
          path: `query.${name}`,
          message: 'unknown parameter: /metrics takes none',
        }));
        throw new ApiError(
          'VALIDATION_ERROR',
          `Invalid query: ${issues.map((i) => `${i.path}: ${i.message}`).join('; ')}`,
          { issues },
        );
      }
      const body = await options.metrics.registry.metrics();
      res.setHeader('Content-Type', options.metrics.registry.contentType);
      res.status(200).send(body);
    } catch (error) {
      options.sendError(res, error);
    }
  };
}
