import type { createCaller } from '@cognition/api';
import type { AgentEventEnvelope } from '@cognition/contracts';
import type { IncomingHttpHeaders } from 'node:http';
import type { z } from 'zod';

/** The typed tRPC caller the REST adapters delegate to. */
export type ApiCaller = ReturnType<typeof createCaller>;

export type HttpMethod = 'get' | 'post' | 'put' | 'patch' | 'delete';

type ObjectSchema = z.ZodObject;

/**
 * How a route finds out who is calling:
 * - `required`: `resolveCaller` must succeed: key (401) and every scope header (403);
 * - `key`: a valid key is needed when keys are configured, scope headers are not (readiness
 *   probes and the API description are not tenant data);
 * - `optional`: an anonymous caller is accepted (health probes from load balancers carry no
 *   key and no scope) and the route is told so; a wrong key is still a 401.
 */
export type CallerPolicy = 'required' | 'key' | 'optional';

export interface RouteInput<P extends ObjectSchema, Q extends ObjectSchema, B extends z.ZodType> {
  params: z.output<P>;
  query: z.output<Q>;
  body: z.output<B>;
  /** Query parameters the route's query schema does not declare (e.g. `metadata.<key>`). */
  extraQuery: Record<string, string | string[]>;
  api: ApiCaller;
  /** false when an `optional` route was called without a usable key or scope. */
  identified: boolean;
  /** true once graceful shutdown began. */
  shuttingDown: boolean;
  headers: IncomingHttpHeaders;
  /** Aborted when the client goes away before the response ended. */
  signal: AbortSignal;
}

/** A JSON response (or an empty one when `body` is undefined). */
export interface JsonResult {
  status: number;
  body?: unknown;
}

/**
 * A `text/event-stream` response: the app writes the `retry:` hint, one SSE frame per envelope
 * and heartbeats, and ends the response when `events` ends. Leaving the iteration early (client
 * gone) calls its `return()`, which must release whatever it subscribed to.
 */
export interface StreamResult {
  status: 200;
  events: AsyncIterable<AgentEventEnvelope>;
  /** Extra response headers, e.g. the run id. */
  headers?: Record<string, string>;
}

export type RouteResult = JsonResult | StreamResult;

export function isStreamResult(result: RouteResult): result is StreamResult {
  return 'events' in result;
}

export interface ResponseSpec {
  description: string;
  schema?: z.ZodType;
  /** Default `application/json`. */
  contentType?: 'application/json' | 'text/event-stream';
}

/**
 * One REST route: its wire shapes (used to validate requests and to generate the OpenAPI
 * document, so the two cannot disagree) and a thin handler that calls tRPC procedures.
 */
export interface RestRoute<
  P extends ObjectSchema = ObjectSchema,
  Q extends ObjectSchema = ObjectSchema,
  B extends z.ZodType = z.ZodType,
> {
  method: HttpMethod;
  /** OpenAPI-style path (`/sessions/{id}`); Express's `:id` form is derived from it. */
  path: string;
  operationId: string;
  summary: string;
  description?: string;
  tag: string;
  caller: CallerPolicy;
  request: {
    params?: P;
    query?: Q;
    /** Collects query parameters with this prefix instead of rejecting them as unknown. */
    extraQueryPrefix?: string;
    body?: B;
    /**
     * `artifact`: the body may carry artifact content, so its limit is the larger of
     * COGNITION_MAX_BODY_BYTES and the artifact limit with base64 overhead.
     */
    bodyLimit?: 'artifact';
    /** Request headers the route reads (documentation only; the handler validates them). */
    headers?: ObjectSchema;
    /** Example bodies; the OpenAPI spec validates them against the generated document. */
    examples?: Record<string, unknown>;
  };
  responses: Record<number, ResponseSpec>;
  handle(input: RouteInput<P, Q, B>): Promise<RouteResult>;
}

/** Keeps each route's handler typed by its own schemas while the table holds them uniformly. */
export function defineRoute<
  P extends ObjectSchema = ObjectSchema,
  Q extends ObjectSchema = ObjectSchema,
  B extends z.ZodType = z.ZodType,
>(route: RestRoute<P, Q, B>): RestRoute {
  return route;
}

export function expressPath(path: string): string {
  return path.replace(/\{(\w+)\}/g, ':$1');
}
