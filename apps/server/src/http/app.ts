import type { ApiServices, AuthConfig } from '@cognition/api';
import {
  appRouter,
  createApiContext,
  resolveCaller,
  retryAfterOf,
  scopeHeaderName,
  toTRPCError,
} from '@cognition/api';
import { createExpressMiddleware } from '@trpc/server/adapters/express';
import cors from 'cors';
import express from 'express';
import type { Express } from 'express';
import type { Logger } from 'pino';
import type { ServerMetrics } from '../telemetry/metrics';
import { METRICS_PATH, httpTelemetry, metricsRoute } from '../telemetry/http';
import { adminRouter } from './admin';
import { hostCheck, hostCheckEnabled } from './host-check';
import { landing } from './landing';
import { requestIdOf, requestLog, requestLogging } from './request-log';
import { errorHandler, sendDomainError, sendError } from './rest/errors';
import type { SseHttpConfig } from './rest/event-stream';
import { identify } from './rest/handler';
import { mountRest } from './rest/mount';
import { mountLangGraph } from './langgraph/mount';
import type { LangGraphMountOptions } from './langgraph/mount';
import { lazyRouter } from './lazy-router';
import { MESSAGE_ID_HEADER, RUN_ID_HEADER } from './rest/routes/runs';
import type { ServerState } from './server-state';
import { trpcMessageStreamMiddleware } from './trpc-stream/message-stream';
import { trpcRunEventsMiddleware } from './trpc-stream/run-events';

export type { SseHttpConfig } from './rest/event-stream';
export type { ServerState } from './server-state';

/** What the HTTP layer needs from the configuration. */
export interface HttpConfig {
  scoping: { enabled: boolean; keys: string[] };
  apiKeys: AuthConfig['apiKeys'];
  corsOrigins: string[];
  /**
   * `COGNITION_ALLOWED_HOSTS`: the Host / Origin check (http/host-check.ts) runs when no API key
   * is configured or hosts are listed. Absent: none listed.
   */
  network?: { allowedHosts: string[] };
  maxBodyBytes: number;
  /** Requests at least this slow are logged at info (`COGNITION_LOG_SLOW_REQUEST_MS`). */
  logSlowRequestMs?: number;
  /** Largest artifact content (decoded); the artifact routes' body limit follows it. */
  artifactMaxBytes?: number;
  sse: SseHttpConfig;
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
  /**
   * The LangGraph API (docs/langgraph-api.md): the user graphs, the sessions' checkpointer and
   * its retention store, stored assistants, the store, and where runs stopping on this node are told.
   */
  langgraph?: Pick<
    LangGraphMountOptions,
    'graphs' | 'checkpointer' | 'assistants' | 'store' | 'retention' | 'onRunStopped'
  >;
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
 * Builds the Express application: logging with request ids, security headers, the Host / Origin
 * check (host-check.ts), CORS, `/trpc`,
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

  app.use(
    requestLogging(
      logger,
      config.logSlowRequestMs === undefined ? {} : { slowMs: config.logSlowRequestMs },
    ),
  );

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

  // Before everything that answers (CORS preflights, /admin, /health): a request a rebound
  // domain or a foreign page sent changes nothing and reads nothing.
  const allowedHosts = config.network?.allowedHosts ?? [];
  if (hostCheckEnabled(config.apiKeys.length, allowedHosts)) {
    app.use(hostCheck({ allowedHosts, corsOrigins: config.corsOrigins }));
  }

  if (config.corsOrigins.length > 0) {
    app.use(
      cors({
        origin: config.corsOrigins.includes('*') ? '*' : config.corsOrigins,
        methods: ['GET', 'POST', 'PATCH', 'DELETE', 'OPTIONS'],
        allowedHeaders: [
          'Content-Type',
          'Authorization',
          'Last-Event-ID',
          'X-Api-Key',
          'X-Request-Id',
          'trpc-accept',
          'Mcp-Protocol-Version',
          'Mcp-Session-Id',
          'A2A-Version',
          'A2A-Extensions',
          ...config.scoping.keys.map(scopeHeaderName),
        ],
        exposedHeaders: ['X-Request-Id', RUN_ID_HEADER, MESSAGE_ID_HEADER],
        maxAge: 600,
      }),
    );
  }

  app.use(
    '/trpc',
    // The hot streams bypass tRPC's fetch-style adapter (see trpc-stream/run-events.ts and
    // trpc-stream/message-stream.ts); every other /trpc request goes on to the adapter.
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

  // The open protocols (docs/protocols.md): the same callers, scopes and procedures as REST,
  // each loaded with its first request.
  const protocol = { auth, services, maxBodyBytes: config.maxBodyBytes };
  app.use(
    lazyRouter(['/mcp'], async () => (await import('./protocols/mcp/mount')).mcpRouter(protocol)),
  );
  app.use(
    lazyRouter(['/a2a', '/.well-known/agent-card.json'], async () =>
      (await import('./protocols/a2a/mount')).a2aRouter(protocol),
    ),
  );
  app.use(
    lazyRouter(['/ag-ui'], async () =>
      (await import('./protocols/ag-ui/mount')).agUiRouter(protocol),
    ),
  );

  mountRest(app, {
    auth,
    services,
    state,
    sse: config.sse,
    metrics,
    maxBodyBytes: config.maxBodyBytes,
    ...(config.artifactMaxBytes !== undefined ? { artifactMaxBytes: config.artifactMaxBytes } : {}),
    openApi: {
      scopeKeys: config.scoping.enabled ? config.scoping.keys : [],
      apiKeys: config.apiKeys.length > 0,
      ...(metrics
        ? { metrics: { token: (options.telemetry?.metricsToken ?? null) !== null } }
        : {}),
    },
  });

  if (options.langgraph) {
    mountLangGraph(app, {
      auth,
      services,
      logger: logger.child({ component: 'langgraph' }),
      maxBodyBytes: config.maxBodyBytes,
      shuttingDown: () => state.shuttingDown,
      ...options.langgraph,
    });
  }

  if (metrics) {
    app.get(
      METRICS_PATH,
      metricsRoute({
        metrics,
        token: options.telemetry?.metricsToken ?? null,
        authorize: (req) => identify(req, 'key', auth),
        sendError: sendDomainError,
      }),
    );
  }

  if (options.adminDir !== undefined) app.use('/admin', adminRouter(options.adminDir));
  app.get('/', landing({ version: services.version, admin: options.adminDir !== undefined }));

  app.use((req, res) => {
    sendError(res, 404, { detail: `Not found: ${req.method} ${req.path}`, code: 'NOT_FOUND' });
  });
  app.use(errorHandler);
  return app;
}
