import { formatSseFrame } from '@cognition/runtime';
import type { Request, Response } from 'express';
import { once } from 'node:events';
import type { ServerMetrics } from '../../telemetry/metrics';
import { requestLog } from '../request-log';
import type { SseHeartbeat } from '../sse-heartbeat';
import type { StreamResult } from './route';

/** How the REST event streams are written. */
export interface SseHttpConfig {
  /** Sent first as `retry: <ms>`: how long EventSource clients wait before reconnecting. */
  retryMs: number;
  /** Interval of `: ping` comments keeping idle proxies from closing the stream. */
  heartbeatMs: number;
}

const PING = ': ping\n\n';

/**
 * Writes an event stream, counted as open in `deps.metrics` meanwhile: headers, the `retry:`
 * hint, one frame per envelope, `: ping` heartbeats (from `heartbeat`, the timer every REST
 * stream shares), honouring backpressure; ends the response when the events end. A client that
 * disconnects stops the iteration (whose `return()` releases the subscription). Never rejects:
 * a failure is logged, and the client sees the stream end.
 */
export async function writeEventStream(
  req: Request,
  res: Response,
  result: StreamResult,
  deps: { sse: SseHttpConfig; metrics: ServerMetrics | null },
  heartbeat: SseHeartbeat,
  gone: AbortSignal,
): Promise<void> {
  let stopPings: (() => void) | undefined;
  let release: (() => void) | undefined;
  let events = 0;
  try {
    res.status(result.status);
    res.setHeader('Content-Type', 'text/event-stream');
    res.setHeader('Cache-Control', 'no-cache');
    res.setHeader('X-Accel-Buffering', 'no');
    if (!res.hasHeader('Connection')) res.setHeader('Connection', 'keep-alive');
    for (const [name, value] of Object.entries(result.headers ?? {})) res.setHeader(name, value);
    res.flushHeaders();
    res.write(`retry: ${deps.sse.retryMs}\n\n`);
    stopPings = heartbeat.add(res, PING);
    release = deps.metrics?.trackStream('rest_sse');
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
    stopPings?.();
    release?.();
  }
  if (!res.destroyed) res.end();
  requestLog(req).debug({ events, clientGone: gone.aborted }, 'event stream ended');
}
