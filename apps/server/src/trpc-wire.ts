import type { ApiContext } from '@cognition/api';
import { appRouter } from '@cognition/api';
import { getTRPCErrorFromUnknown, getTRPCErrorShape } from '@trpc/server';
import type { Request, Response } from 'express';
import { once } from 'node:events';
import { requestLog } from './request-log';

/**
 * What the hand-written tRPC responses (trpc-sse.ts, trpc-message-stream.ts) share: they write
 * the wire formats of tRPC's own producers for its hottest procedures, through the router's
 * transformer and error formatter, so `@cognition/client` cannot tell them from the adapter.
 */
export const routerConfig = appRouter._def._config;

/** One value as the router's transformer (superjson) puts it on the wire, as JSON text. */
export function serialize(value: unknown): string {
  return JSON.stringify(routerConfig.transformer.output.serialize(value));
}

/** tRPC's own test for an abort: such an error ends a stream without an error frame. */
export function isAbortError(error: unknown): boolean {
  return typeof error === 'object' && error !== null && (error as Error).name === 'AbortError';
}

export function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/**
 * The error shape tRPC's errorFormatter gives `cause` (`data.code`, `data.httpStatus`...);
 * an internal error is logged, as the adapter's `onError` does.
 */
export function errorShapeOf(
  req: Request,
  cause: unknown,
  call: {
    type: 'subscription' | 'mutation';
    path: string;
    input: unknown;
    ctx: ApiContext | undefined;
  },
): unknown {
  const error = getTRPCErrorFromUnknown(cause);
  if (error.code === 'INTERNAL_SERVER_ERROR') {
    requestLog(req).error({ err: error.cause ?? error }, 'tRPC procedure failed');
  }
  return getTRPCErrorShape({ config: routerConfig, error, ...call });
}

/** Aborted when the client goes away before the response finished. */
export function abortedOnClose(res: Response): AbortController {
  const gone = new AbortController();
  res.once('close', () => {
    if (!res.writableFinished) gone.abort();
  });
  return gone;
}

/** Writes one frame; when the socket is full (a slow client), waits for it to drain or close. */
export async function writeFrame(res: Response, frame: string): Promise<void> {
  if (!res.write(frame)) await Promise.race([once(res, 'drain'), once(res, 'close')]);
}
