import type { ApiContext, RouterInputs } from '@cognition/api';
import { createCaller, toTRPCError } from '@cognition/api';
import { isTrackedEnvelope, TRPCError } from '@trpc/server';
import type { Request, RequestHandler } from 'express';
import { SseHeartbeat } from '../sse-heartbeat';
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

/** A `runs.events` call read from its request: the context and input, or why they failed. */
type EventsCall =
  | { ctx: ApiContext; input: unknown; failure?: undefined }
  | { ctx: ApiContext | undefined; input: unknown; failure: TRPCError };

/**
 * The call of a plain subscription GET of `runs.events` (undefined for any other request). Like
 * tRPC: the context (authentication) first, then the input.
 */
function plainSubscriptionCall(req: Request, deps: TrpcEventsDeps): EventsCall | undefined {
  const params = queryOf(req);
  if (!isPlainSubscriptionGet(req, params)) return undefined;
  let ctx: ApiContext | undefined;
  try {
    ctx = callContext(req, deps);
    return { ctx, input: readInput(req, params) };
  } catch (error) {
    return { ctx, input: undefined, failure: toTRPCError(error) };
  }
}

/**
 * The procedure's events, or its failure: it resolves once its lookups passed (a session
 * outside the scope fails here, before events).
 */
async function subscribe(
  call: EventsCall,
  signal: AbortSignal,
): Promise<AsyncIterable<unknown> | TRPCError> {
  if (call.failure) return call.failure;
  try {
    const api = createCaller(call.ctx, { signal });
    // The procedure's input parser validates `input`; the cast only satisfies the caller's type.
    return await api.runs.events(call.input as RunEventsInput);
  } catch (error) {
    return toTRPCError(error);
  }
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
  // One timer pings every open subscription (each had an interval of its own, restarted by each
  // event): a ping at most `intervalMs` after the last, so never longer silent than tRPC's.
  const heartbeat = new SseHeartbeat(sse.ping?.enabled ? (sse.ping.intervalMs ?? 1000) : 0);
  const connectedFrame = `event: connected\ndata: ${JSON.stringify(sse.client ?? {})}\n\n\n`;

  return async (req, res, next) => {
    // Read in functions of their own: what only the call needs (the parsed query, the caller)
    // is released once it returned, not kept for as long as the subscription stays open.
    const call = plainSubscriptionCall(req, deps);
    if (!call) {
      next();
      return;
    }
    const { ctx, input } = call;
    const stream = new TrpcStream(req, res, 'trpc_sse', deps.metrics);
    const source = await subscribe(call, stream.signal);

    stream.open('text/event-stream', connectedFrame, {
      'Cache-Control': 'no-cache, no-transform',
      'X-Accel-Buffering': 'no',
      // While draining, the Connection: close set earlier tells the client to reconnect elsewhere.
      ...(res.hasHeader('Connection') ? {} : { Connection: 'keep-alive' }),
    });

    const stopPings = heartbeat.add(res, PING_FRAME);
    try {
      if (source instanceof TRPCError) throw source;
      for await (const item of source) {
        if (!stream.live) break;
        // The resolver yields `tracked(id, envelope)`; the caller's static type is the unwrapped one.
        if (!isTrackedEnvelope(item))
          throw new Error(`${PROCEDURE_PATH} yielded an untracked item`);
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
      stopPings();
    }
    stream.end('tRPC event stream ended');
  };
}
