import type { ApiContext, ApiServices, AuthConfig } from '@cognition/api';
import { appRouter, createApiContext, resolveCaller } from '@cognition/api';
import { getTRPCErrorFromUnknown, getTRPCErrorShape } from '@trpc/server';
import type { Request, Response } from 'express';
import { once } from 'node:events';
import type { ServerMetrics } from '../../telemetry/metrics';
import { requestIdOf, requestLog } from '../request-log';

/*
 * What the hand-written tRPC stream responses (run-events.ts, message-stream.ts) share. They
 * write the wire formats of tRPC's own producers for its hottest procedures, through the
 * router's transformer and error formatter, so `@cognition/client` cannot tell them from the
 * adapter (preamble.spec.ts drives both with `@trpc/client`'s own links): the call's context
 * built as the adapter builds it, a 200 head with `Vary`, one `res.write` per frame with
 * backpressure, failures in the errorFormatter's shape, the open stream counted, its end logged.
 */

export const routerConfig = appRouter._def._config;

/** What every hand-written stream needs from the server. */
export interface TrpcStreamDeps {
  auth: AuthConfig;
  services: ApiServices;
  /** Counts the open streams (`cognition_active_streams{transport=...}`). */
  metrics?: ServerMetrics;
}

/** One value as the router's transformer (superjson) puts it on the wire, as JSON text. */
export function serialize(value: unknown): string {
  return JSON.stringify(routerConfig.transformer.output.serialize(value));
}

export function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** The query parameters tRPC reads (`batch`, `input`...), from the raw URL as its adapter does. */
export function queryOf(req: Request): URLSearchParams {
  const query = req.url.indexOf('?');
  return new URLSearchParams(query === -1 ? '' : req.url.slice(query + 1));
}

/**
 * The call's context as the adapter's `createContext` builds it: the caller from the headers
 * (a missing or wrong key throws), the request id.
 */
export function callContext(req: Request, deps: TrpcStreamDeps): ApiContext {
  return createApiContext(deps.services, resolveCaller(req.headers, deps.auth), requestIdOf(req));
}

/** A procedure call as tRPC's errorFormatter is told about it. */
export interface StreamCall {
  type: 'subscription' | 'mutation';
  path: string;
  input: unknown;
  ctx: ApiContext | undefined;
}

/** One hand-written stream response, from its head to its end. */
export class TrpcStream {
  private readonly gone = new AbortController();
  private events = 0;
  private release: (() => void) | undefined;

  constructor(
    private readonly req: Request,
    private readonly res: Response,
    private readonly transport: 'trpc_sse' | 'trpc_jsonl',
    private readonly metrics?: ServerMetrics,
  ) {
    res.once('close', () => {
      if (!res.writableFinished) this.gone.abort();
    });
  }

  /** Aborted when the client goes away before the response finished (ends the procedure's events). */
  get signal(): AbortSignal {
    return this.gone.signal;
  }

  /** Frames still have somewhere to go: the client is there and the socket open. */
  get live(): boolean {
    return !this.gone.signal.aborted && !this.res.destroyed;
  }

  /**
   * The head every one of these responses sends (200: tRPC reports failures inside the stream),
   * then its first frame; the stream counts as open from here.
   */
  open(contentType: string, first: string, headers: Record<string, string> = {}): void {
    this.res.status(200);
    this.res.setHeader('Content-Type', contentType);
    this.res.setHeader('Vary', 'trpc-accept, accept');
    for (const [name, value] of Object.entries(headers)) this.res.setHeader(name, value);
    // The head on its own first: Node builds it as a tree of ~40 concatenated strings, which
    // writing flattens; written joined with the first frame instead, the tree itself stayed
    // referenced by the response for the stream's life (1.3 KB per idle subscription).
    this.res.flushHeaders();
    this.res.write(first);
    this.release = this.metrics?.trackStream(this.transport);
  }

  /** Writes one event's frame; when the socket is full (a slow client), waits for it to drain or close. */
  async event(frame: string): Promise<void> {
    this.events += 1;
    if (!this.res.write(frame)) {
      await Promise.race([once(this.res, 'drain'), once(this.res, 'close')]);
    }
  }

  /**
   * Whether a failure gets an error frame: not an abort (tRPC's own test; such an error ends a
   * stream without one), and not when the client already cut the connection.
   */
  reportable(cause: unknown): boolean {
    const aborted =
      typeof cause === 'object' && cause !== null && (cause as Error).name === 'AbortError';
    return !aborted && !this.res.destroyed;
  }

  /**
   * The error shape tRPC's errorFormatter gives `cause` (`data.code`, `data.httpStatus`...);
   * an internal error is logged, as the adapter's `onError` does.
   */
  errorShape(cause: unknown, call: StreamCall): unknown {
    const error = getTRPCErrorFromUnknown(cause);
    if (error.code === 'INTERNAL_SERVER_ERROR') {
      requestLog(this.req).error({ err: error.cause ?? error }, 'tRPC procedure failed');
    }
    return getTRPCErrorShape({ config: routerConfig, error, ...call });
  }

  /** Stops counting the stream, ends the response (unless the client cut it), logs how it ended. */
  end(message: string): void {
    this.release?.();
    this.release = undefined;
    if (!this.res.destroyed) this.res.end();
    requestLog(this.req).debug(
      { events: this.events, clientGone: this.gone.signal.aborted },
      message,
    );
  }
}
