import type { RequestHandler } from 'express';
import type { Logger } from 'pino';
import { randomUUID } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';

declare module 'node:http' {
  interface IncomingMessage {
    /** The request id (`X-Request-Id`), set by `requestLogging`. */
    id?: string;
    /** The server's logger, set by `requestLogging`; log through `requestLog(req)`. */
    serverLogger?: Logger;
  }
}

/** An incoming `X-Request-Id` is echoed only when it is short and safe to put in a log line. */
const REQUEST_ID_PATTERN = /^[A-Za-z0-9._:-]{1,128}$/;

/** What `requestLogging` logs at info besides errors. */
export interface RequestLoggingOptions {
  /**
   * A request that took at least this long is logged at info (`slow request`); 0 turns that
   * off. Event streams are exempt: they are open as long as their run by design.
   */
  slowMs?: number;
}

/** `COGNITION_LOG_SLOW_REQUEST_MS`'s default. */
const SLOW_REQUEST_MS_DEFAULT = 1000;

/**
 * Request ids and one log line per request, at its end, with the method, URL, status,
 * `responseTime` and `requestId` — never headers (they carry keys, cookies and scope values,
 * and drowned the useful lines). The level says whether a person should look: `request
 * errored` at error (5xx), `slow request` at info (over `slowMs`), every other request
 * `request completed` at debug (visible with `COGNITION_LOG_LEVEL=debug`). It creates no child
 * loggers per request: an event stream is open for hours, and what a request allocates at its
 * start lives as long.
 */
export function requestLogging(
  logger: Logger,
  options: RequestLoggingOptions = {},
): RequestHandler {
  const slowMs = options.slowMs ?? SLOW_REQUEST_MS_DEFAULT;
  return (req, res, next) => {
    const incoming = req.headers['x-request-id'];
    const id = typeof incoming === 'string' && REQUEST_ID_PATTERN.test(incoming) ? incoming : null;
    req.id = id ?? randomUUID();
    req.serverLogger = logger;
    res.setHeader('X-Request-Id', req.id);
    const started = performance.now();
    // 'close' comes after 'finish', and also when the client went away first.
    res.once('close', () => {
      const responseTime = Math.round((performance.now() - started) * 10) / 10;
      logCompletion(logger, req, res, responseTime, slowMs);
    });
    next();
  };
}

function logCompletion(
  logger: Logger,
  req: IncomingMessage,
  res: ServerResponse,
  responseTime: number,
  slowMs: number,
): void {
  const status = res.statusCode;
  const line = {
    requestId: req.id,
    req: {
      method: req.method,
      // Express rewrites `url` inside mounted routers (`/trpc`); `originalUrl` is what was sent.
      url: (req as IncomingMessage & { originalUrl?: string }).originalUrl ?? req.url,
      remoteAddress: req.socket.remoteAddress,
    },
    res: { statusCode: status },
    responseTime,
  };
  if (status >= 500) {
    logger.error(
      { ...line, err: new Error(`failed with status code ${status}`) },
      'request errored',
    );
    return;
  }
  const stream = String(res.getHeader('Content-Type') ?? '').startsWith('text/event-stream');
  if (slowMs > 0 && responseTime >= slowMs && !stream) logger.info(line, 'slow request');
  else logger.debug(line, 'request completed');
}

/**
 * A logger whose lines carry the request's `requestId`, made when something is to be logged
 * (errors, a stream's end), not for every request.
 */
export function requestLog(req: IncomingMessage): Logger {
  if (!req.serverLogger) throw new Error('requestLog: requestLogging is not mounted');
  return req.serverLogger.child({ requestId: req.id });
}

/** The id `requestLogging` gave the request (a fresh one if it is not mounted). */
export function requestIdOf(req: IncomingMessage): string {
  return req.id ?? randomUUID();
}
