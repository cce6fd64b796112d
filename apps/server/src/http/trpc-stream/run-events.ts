import type { ApiContext, RouterInputs } from '@cognition/api';
import { createCaller, toTRPCError } from '@cognition/api';
import { isTrackedEnvelope, TRPCError } from '@trpc/server';
import type { Request, RequestHandler } from 'express';
import type { TrpcStreamDeps } from './preamble';
import { callContext, isObject, queryOf, routerConfig, serialize, TrpcStream } from './preamble';

/**
 * The one subscription served here instead of by tRPC's adapter: `httpSubscriptionLink` opens
 * it as `GET /trpc/runs.events?input=<superjson JSON>`.
 */
const PROCEDURE_PATH = 'runs.events';

const config = routerConfig;

/** The SSE settings of the tRPC router used here: the ping and the options told to the client. */
export type TrpcSseOptions = Pick<NonNullable<typeof config.sse>, 'ping' | 'client'>;

export interface TrpcEventsDeps extends TrpcStreamDeps {
  /** Default: the router's own `sse` settings (libs/api `initTRPC`), as tRPC's adapter uses. */
  sse?: TrpcSseOptions;
}

type RunEventsInput = RouterInputs['runs']['events'];

// The frames of tRPC's `sseStreamProducer`, byte for byte: its TransformStream writes each
// field as `<name>: <value>\n` in the order event, data, id, then "\n\n" (so a frame ends in
// three newlines). Here each frame is one string and one `res.write`, not 4–5 socket chunks.
const PING_FRAME = 'event: ping\ndata: \n\n\n';
const RETURN_FRAME = 'event: return\ndata: \n\n\n';

function lastEventIdOf(req: Request, params: URLSearchParams): string | null {
  const header = req.headers['last-event-id'];
  if (typeof header === 'string') return header;
  return params.get('lastEventId') ?? params.get('Last-Event-Id');
}

/**
 * The procedure input as tRPC's GET handling builds it: the `input` query parameter is JSON of
 * the transformer's (superjson) encoding; a reconnecting EventSource's `Last-Event-ID` header
 * (or `?lastEventId=`) is folded in as `lastEventId`, overriding the one in `input`.
 */
function readInput(req: Request, params: URLSearchParams): unknown {
  let input: unknown;
  const raw = params.get('input');
  try {
    input = raw ? config.transformer.input.deserialize(JSON.parse(raw)) : undefined;
  } catch (cause) {
    throw new TRPCError({
      code: 'BAD_REQUEST',
      message: cause instanceof Error ? cause.message : 'Invalid input',
      cause,
    });
  }
  const lastEventId = lastEventIdOf(req, params);
  if (!lastEventId) return input;
  if (isObject(input)) return { ...input, lastEventId };
  return input ?? { lastEventId };
}

/**
 * Only a plain subscription GET of `runs.events` is served here; other procedures, HEAD, batches
 * and bodies tRPC would parse differently are left to its adapter.
 */
function isPlainSubscriptionGet(req: Request, params: URLSearchParams): boolean {
  if (req.method !== 'GET' || req.path !== `/${PROCEDURE_PATH}`) return false;
  if (params.get('batch') === '1') return false;
  const contentType = req.headers['content-type'];
  return (
    contentType === undefined ||
    contentType.split(';', 1)[0]?.trim().toLowerCase() === 'application/json'
  );
}

/**
 * Mounted on `/trpc` in front of tRPC's adapter. Serves the `runs.events` subscription with
 * tRPC's SSE wire format (what `httpSubscriptionLink` parses) written straight to the Node
 * response, one `res.write` per frame with backpressure.
 * tRPC's adapter does the same through a fetch `Request`/`Response`, ~15 async generators and
 * a web-stream pipeline per subscription, with 4–5 socket writes per event: 2.5× the server CPU
 * per event and 2.7× the RSS per open subscription (docs/benchmarks.md, 2 and 4).
 *
 * The procedure is called through `createCaller`, so authentication, scoping, input validation
 * and the error mapping are libs/api's. Like tRPC, every failure is reported inside the stream:
 * a `connected` event, then a `serialized-error` event carrying the errorFormatter's shape
 * (`data.code`, `data.httpStatus`: 401, 403, 404, 422...), so the client rejects the
 * subscription without retrying; an error after events were sent is reported the same way.
 * A normal end sends the `return` event. A client that disconnects aborts the caller's signal
 * and returns the iterator, which releases the event-log subscription.
 */
export function trpcRunEventsMiddleware(deps: TrpcEventsDeps): RequestHandler {
  const sse = deps.sse ?? config.sse ?? {};
  const pingMs = sse.ping?.enabled ? (sse.ping.intervalMs ?? 1000) : 0;
  const connectedFrame = `event: connected\ndata: ${JSON.stringify(sse.client ?? {})}\n\n\n`;

  return async (req, res, next) => {
    const params = queryOf(req);
    if (!isPlainSubscriptionGet(req, params)) {
      next();
      return;
    }
    const stream = new TrpcStream(req, res, 'trpc_sse', deps.metrics);

    // Like tRPC: the context (authentication) first, then the input, then the procedure, which
    // resolves once its lookups passed (a session outside the scope fails here, before events).
    let ctx: ApiContext | undefined;
    let input: unknown;
    let source: AsyncIterable<unknown> | TRPCError;
    try {
      ctx = callContext(req, deps);
      input = readInput(req, params);
      const api = createCaller(ctx, { signal: stream.signal });
      // The procedure's input parser validates `input`; the cast only satisfies the caller's type.
      source = await api.runs.events(input as RunEventsInput);
    } catch (error) {
      source = toTRPCError(error);
    }

    stream.open('text/event-stream', connectedFrame, {
      'Cache-Control': 'no-cache, no-transform',
      'X-Accel-Buffering': 'no',
      // While draining, the Connection: close set earlier tells the client to reconnect elsewhere.
      ...(res.hasHeader('Connection') ? {} : { Connection: 'keep-alive' }),
    });

    // tRPC pings after `intervalMs` without a frame; each event restarts the interval.
    const ping =
      pingMs > 0
        ? setInterval(() => {
            if (!res.destroyed) res.write(PING_FRAME);
          }, pingMs)
        : undefined;
    try {
      if (source instanceof TRPCError) throw source;
      for await (const item of source) {
        if (!stream.live) break;
        // The resolver yields `tracked(id, envelope)`; the caller's static type is the unwrapped one.
        if (!isTrackedEnvelope(item))
          throw new Error(`${PROCEDURE_PATH} yielded an untracked item`);
        ping?.refresh();
        await stream.event(`data: ${serialize(item[1])}\nid: ${item[0]}\n\n\n`);
      }
      if (stream.live) res.write(RETURN_FRAME);
    } catch (cause) {
      if (stream.reportable(cause)) {
        const shape = stream.errorShape(cause, {
          type: 'subscription',
          path: PROCEDURE_PATH,
          input,
          ctx,
        });
        res.write(`event: serialized-error\ndata: ${serialize(shape)}\n\n\n`);
      }
    } finally {
      clearInterval(ping);
    }
    stream.end('tRPC event stream ended');
  };
}
