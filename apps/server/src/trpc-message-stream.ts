import type {
  ApiContext,
  ApiServices,
  AuthConfig,
  MessageStream,
  RouterInputs,
} from '@cognition/api';
import { createApiContext, createCaller, resolveCaller } from '@cognition/api';
import type { Request, RequestHandler } from 'express';
import { requestIdOf, requestLog } from './request-log';
import type { ServerMetrics } from './telemetry/metrics';
import {
  abortedOnClose,
  errorShapeOf,
  isAbortError,
  isObject,
  routerConfig,
  serialize,
  writeFrame,
} from './trpc-wire';

/**
 * `messages.stream` as `httpBatchStreamLink` calls it: `POST /trpc/messages.stream?batch=1`
 * with `trpc-accept: application/jsonl` and a one-call batch body `{"0": <superjson input>}`.
 */
const PROCEDURE_PATH = 'messages.stream';

type StreamInput = RouterInputs['messages']['stream'];

// tRPC's JSON Lines batch format (`jsonlStreamProducer`), one line per chunk, each line the
// transformer's encoding of `[chunkId, status, value]`. The head makes call 0 promise chunk 0.
// A failed call resolves chunk 0 to `{ error }`; a successful one is a promise chain (chunk 0:
// `{ result }`, 1: `{ data }`, 2: the data with `events` as async iterable 3), and the events
// are chunk 3's items: status 1 yields, 0 returns, 2 errs.
const HEAD_LINE = `${serialize({ 0: [[0], [null, 0, 0]] })}\n`;
const RESULT_LINES =
  `${serialize([0, 0, [[{ result: 0 }], ['result', 0, 1]]])}\n` +
  `${serialize([1, 0, [[{ data: 0 }], ['data', 0, 2]]])}\n`;
const EVENTS_CHUNK = 3;
const RETURN_LINE = `${serialize([EVENTS_CHUNK, 0, [[]]])}\n`;

export interface TrpcMessageStreamDeps {
  auth: AuthConfig;
  services: ApiServices;
  /** The largest request body accepted (as the tRPC adapter's `maxBodySize`). */
  maxBodyBytes: number;
  /** Counts the open streams (`cognition_active_streams{transport="trpc_jsonl"}`). */
  metrics?: ServerMetrics;
}

function isStreamCall(req: Request): boolean {
  if (req.method !== 'POST' || req.path !== `/${PROCEDURE_PATH}`) return false;
  const query = req.url.indexOf('?');
  const params = new URLSearchParams(query === -1 ? '' : req.url.slice(query + 1));
  return params.get('batch') === '1' && req.headers['trpc-accept'] === 'application/jsonl';
}

/**
 * The body as text, or null when it is larger than `limit`: then whatever was read is put back,
 * so the adapter reads the whole body and refuses it as it does any body over its limit.
 */
async function readBody(req: Request, limit: number): Promise<string | null> {
  const declared = Number(req.headers['content-length']);
  if (Number.isFinite(declared) && declared > limit) return null;
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req.iterator({ destroyOnReturn: false }) as AsyncIterable<Buffer>) {
    chunks.push(chunk);
    size += chunk.length;
    if (size > limit) {
      req.unshift(Buffer.concat(chunks));
      return null;
    }
  }
  return Buffer.concat(chunks).toString('utf8');
}

/** The one call's input of a `{"0": ...}` batch body; undefined for any other shape. */
function singleCallInput(body: string): { input: unknown } | undefined {
  let batch: unknown;
  try {
    batch = JSON.parse(body);
  } catch {
    return undefined;
  }
  if (!isObject(batch) || Object.keys(batch).length !== 1 || !('0' in batch)) return undefined;
  try {
    return { input: routerConfig.transformer.input.deserialize(batch['0']) };
  } catch {
    return undefined;
  }
}

/**
 * Mounted on `/trpc` in front of tRPC's adapter, like trpc-sse.ts and for the same reason: the
 * adapter streams a mutation's output through a fetch `Response`, a chain of async generators
 * and three web-stream transforms per line (1.4× the server CPU per streamed token of this
 * path, docs/benchmarks.md, benchmark 2). Here each line is one `res.write` with backpressure.
 *
 * Only the single-call batch the client sends is served; anything else (several calls, a body
 * that does not parse, a context that cannot be built — e.g. a bad API key) goes on to the
 * adapter with the body already read into `req.body`, so tRPC answers it exactly as it would.
 * The procedure is called through `createCaller`: authentication, scoping, rate limits, input
 * validation and error mapping are libs/api's. A failed send is the call's error line (as
 * tRPC writes it); a client that disconnects aborts the caller's signal, which ends the events.
 */
export function trpcMessageStreamMiddleware(deps: TrpcMessageStreamDeps): RequestHandler {
  return async (req, res, next) => {
    if (!isStreamCall(req)) {
      next();
      return;
    }
    let body: string | null;
    try {
      body = await readBody(req, deps.maxBodyBytes);
    } catch (error) {
      next(error);
      return;
    }
    const call = body === null ? undefined : singleCallInput(body);
    let ctx: ApiContext;
    try {
      if (body === null || call === undefined) throw new Error('not a single-call batch');
      ctx = createApiContext(
        deps.services,
        resolveCaller(req.headers, deps.auth),
        requestIdOf(req),
      );
    } catch {
      if (body !== null) (req as Request & { body?: unknown }).body = body;
      next();
      return;
    }

    const gone = abortedOnClose(res);
    res.status(200);
    res.setHeader('Content-Type', 'application/json');
    res.setHeader('Vary', 'trpc-accept, accept');
    res.write(HEAD_LINE);
    const release = deps.metrics?.trackStream('trpc_jsonl');
    let stream: MessageStream;
    let events = 0;
    try {
      try {
        // The procedure's input parser validates `input`; the cast only satisfies the caller's type.
        stream = await createCaller(ctx, { signal: gone.signal }).messages.stream(
          call.input as StreamInput,
        );
      } catch (cause) {
        const shape = errorShapeOf(req, cause, {
          type: 'mutation',
          path: PROCEDURE_PATH,
          input: call.input,
          ctx,
        });
        res.write(`${serialize([0, 0, [[{ error: shape }]]])}\n`);
        return;
      }
      const { events: source, ...sent } = stream;
      res.write(
        RESULT_LINES +
          `${serialize([2, 0, [[{ ...sent, events: 0 }], ['events', 1, EVENTS_CHUNK]]])}\n`,
      );
      try {
        for await (const envelope of source) {
          if (gone.signal.aborted || res.destroyed) break;
          events += 1;
          await writeFrame(res, `${serialize([EVENTS_CHUNK, 1, [[envelope]]])}\n`);
        }
        if (!gone.signal.aborted && !res.destroyed) res.write(RETURN_LINE);
      } catch (cause) {
        if (!isAbortError(cause) && !res.destroyed) {
          const shape = errorShapeOf(req, cause, {
            type: 'mutation',
            path: PROCEDURE_PATH,
            input: call.input,
            ctx,
          });
          res.write(`${serialize([EVENTS_CHUNK, 2, shape])}\n`);
        }
      }
    } finally {
      release?.();
      if (!res.destroyed) res.end();
      requestLog(req).debug(
        { events, clientGone: gone.signal.aborted },
        'tRPC message stream ended',
      );
    }
  };
}
