import { formatSseFrame } from '@cognition/runtime';
import type { Request, Response } from 'express';
import { once } from 'node:events';
import { requestLog } from '../request-log';
import type { StreamResult } from './route';

/** How the REST event streams are written. */
export interface SseHttpConfig {
  /** Sent first as `retry: <ms>`: how long EventSource clients wait before reconnecting. */
  retryMs: number;
  /** Interval of `: ping` comments keeping idle proxies from closing the stream. */
  heartbeatMs: number;
}

/**
 * Writes an event stream: headers, the `retry:` hint, one frame per envelope, `: ping`
 * heartbeats, honouring backpressure; ends the response when the events end. A client that
 * disconnects stops the iteration (whose `return()` releases the subscription).
 */
export async function writeEventStream(
  req: Request,
  res: Response,
  result: StreamResult,
  sse: SseHttpConfig,
  gone: AbortSignal,
): Promise<void> {
  res.status(result.status);
  res.setHeader('Content-Type', 'text/event-stream');
  res.setHeader('Cache-Control', 'no-cache');
  res.setHeader('X-Accel-Buffering', 'no');
  if (!res.hasHeader('Connection')) res.setHeader('Connection', 'keep-alive');
  for (const [name, value] of Object.entries(result.headers ?? {})) res.setHeader(name, value);
  res.flushHeaders();
  res.write(`retry: ${sse.retryMs}\n\n`);
  const heartbeat = setInterval(() => {
    if (!res.destroyed) res.write(': ping\n\n');
  }, sse.heartbeatMs);
  let events = 0;
  try {
    for await (const envelope of result.events) {
      if (gone.aborted || res.destroyed) break;
      events += 1;
      if (!res.write(formatSseFrame(envelope))) {
        // A slow client: wait for the socket to drain instead of buffering without bound.
        await Promise.race([once(res, 'drain'), once(res, 'close')]);
      }
    }
  } catch (error) {
    // Headers are gone: the client sees the stream end and resumes with Last-Event-ID.
    requestLog(req).error({ err: error, events }, 'event stream failed');
  } finally {
    clearInterval(heartbeat);
  }
  if (!res.destroyed) res.end();
  requestLog(req).debug({ events, clientGone: gone.aborted }, 'event stream ended');
}
