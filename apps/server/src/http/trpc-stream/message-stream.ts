import type { ApiContext, MessageStream, RouterInputs } from '@cognition/api';
import { ApiError, createCaller } from '@cognition/api';
import { getTRPCErrorShape, TRPCError } from '@trpc/server';
import type { Request, RequestHandler, Response } from 'express';
import type { TrpcStreamDeps } from './preamble';
import { callContext, isObject, queryOf, routerConfig, serialize, TrpcStream } from './preamble';

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

export interface TrpcMessageStreamDeps extends TrpcStreamDeps {
  /** The largest request body accepted (as the tRPC adapter's `maxBodySize`). */
  maxBodyBytes: number;
}

function isProcedureCall(req: Request): boolean {
  return req.method === 'POST' && req.path === `/${PROCEDURE_PATH}`;
}

function acceptsStream(req: Request): boolean {
  return queryOf(req).get('batch') === '1' && req.headers['trpc-accept'] === 'application/jsonl';
}

/**
 * A call that cannot take a stream is refused here, before the procedure runs: tRPC's adapter
 * would run it (store the message, start the run) and only then find it cannot send the events
 * back (415 "use httpBatchStreamLink", naming no field), so the caller would see a failure for a
 * turn that goes on. The answer is the adapter's envelope for the same call with the header named.
 */
function refuseWithoutStream(req: Request, res: Response): void {
  const issue = {
    path: '(header trpc-accept)',
    message: `${PROCEDURE_PATH} streams its answer: call it with ?batch=1 and the header trpc-accept: application/jsonl (httpBatchStreamLink)`,
  };
  const error = new TRPCError({
    code: 'UNSUPPORTED_MEDIA_TYPE',
    message: issue.message,
    cause: new ApiError('VALIDATION_ERROR', issue.message, { issues: [issue] }),
  });
  const shape = getTRPCErrorShape({
    config: routerConfig,
    error,
    type: 'mutation',
    path: PROCEDURE_PATH,
    input: undefined,
    ctx: undefined,
  });
  const answer = { error: routerConfig.transformer.output.serialize(shape) as unknown };
  res
    .status(415)
    .type('application/json')
    .send(JSON.stringify(queryOf(req).get('batch') === '1' ? [answer] : answer));
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
 * Mounted on `/trpc` in front of tRPC's adapter, like run-events.ts and for the same reason: the
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
    if (!isProcedureCall(req)) {
      next();
      return;
    }
    if (!acceptsStream(req)) {
      refuseWithoutStream(req, res);
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
      ctx = callContext(req, deps);
    } catch {
      if (body !== null) (req as Request & { body?: unknown }).body = body;
      next();
      return;
    }

    const stream = new TrpcStream(req, res, 'trpc_jsonl', deps.metrics);
    stream.open('application/json', HEAD_LINE);
    const failed = (cause: unknown) =>
      stream.errorShape(cause, { type: 'mutation', path: PROCEDURE_PATH, input: call.input, ctx });
    let sent: MessageStream;
    try {
      try {
        // The procedure's input parser validates `input`; the cast only satisfies the caller's type.
        sent = await createCaller(ctx, { signal: stream.signal }).messages.stream(
          call.input as StreamInput,
        );
      } catch (cause) {
        res.write(`${serialize([0, 0, [[{ error: failed(cause) }]]])}\n`);
        return;
      }
      const { events: source, ...result } = sent;
      res.write(
        RESULT_LINES +
          `${serialize([2, 0, [[{ ...result, events: 0 }], ['events', 1, EVENTS_CHUNK]]])}\n`,
      );
      try {
        for await (const envelope of source) {
          if (!stream.live) break;
          await stream.event(`${serialize([EVENTS_CHUNK, 1, [[envelope]]])}\n`);
        }
        if (stream.live) res.write(RETURN_LINE);
      } catch (cause) {
        if (stream.reportable(cause)) {
          res.write(`${serialize([EVENTS_CHUNK, 2, failed(cause)])}\n`);
        }
      }
    } finally {
      stream.end('tRPC message stream ended');
    }
  };
}
