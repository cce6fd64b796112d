import type { ApiServices, AuthConfig, Caller } from '@cognition/api';
import {
  ApiError,
  createApiContext,
  createCaller,
  resolveCaller,
  retryAfterOf,
  toHttpError,
} from '@cognition/api';
import { toFieldIssues } from '@cognition/contracts';
import type { Request, RequestHandler } from 'express';
import { z } from 'zod';
import type { ServerMetrics } from '../../telemetry/metrics';
import { requestIdOf, requestLog } from '../request-log';
import type { ServerState } from '../server-state';
import type { SseHeartbeat } from '../sse-heartbeat';
import { sendError } from './errors';
import type { SseHttpConfig } from './event-stream';
import { writeEventStream } from './event-stream';
import type { CallerPolicy, RestRoute, RouteResult } from './route';
import { isStreamResult } from './route';

export interface RouteDeps {
  auth: AuthConfig;
  services: ApiServices;
  state: ServerState;
  sse: SseHttpConfig;
  metrics: ServerMetrics | null;
}

/**
 * The Express handler of one REST route: who calls (by the route's policy), the path, query and
 * body checked against its schemas (422 naming each field), then its handler over a tRPC caller;
 * a JSON answer, an event stream (pinged by `heartbeat`, shared by every REST stream), or the
 * error answer of libs/api's mapping.
 */
export function restHandler(
  route: RestRoute,
  deps: RouteDeps,
  heartbeat: SseHeartbeat,
): RequestHandler {
  return async (req, res) => {
    // Client gone before the response ended: ends event subscriptions, never the run itself.
    const gone = new AbortController();
    res.once('close', () => {
      if (!res.writableFinished) gone.abort();
    });
    try {
      const result = await callRoute(route, deps, req, gone.signal);
      if (isStreamResult(result)) {
        // Not awaited: this handler's frame ends here, the stream's own is all an open one keeps.
        // It reports its failures itself (headers are gone by then).
        void writeEventStream(req, res, result, deps, heartbeat, gone.signal);
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

/**
 * The route's handler called with the request checked. Its own async function, so that what
 * only the call needs (the tRPC caller and context, the validated parts) is released once it
 * returned, not kept by the handler for as long as an event stream stays open.
 */
async function callRoute(
  route: RestRoute,
  deps: RouteDeps,
  req: Request,
  signal: AbortSignal,
): Promise<RouteResult> {
  const { caller, identified } = identify(req, route.caller, deps.auth);
  const params = validate(route.request.params, req.params, 'path');
  const { declared, extra } = splitQuery(req.query as Record<string, string | string[]>, route);
  const query = validate(route.request.query, declared, 'query');
  const body = route.request.body
    ? validate(route.request.body, (req.body as unknown) ?? {}, 'body')
    : undefined;
  const api = createCaller(createApiContext(deps.services, caller, requestIdOf(req)), { signal });
  return route.handle({
    params,
    query,
    body,
    extraQuery: extra,
    api,
    identified,
    shuttingDown: deps.state.shuttingDown,
    headers: req.headers,
    signal,
  });
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

/** The caller of a request under `policy` (see `CallerPolicy`); throws 401/403 as it says. */
export function identify(
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
