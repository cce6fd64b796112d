import type { RequestHandler } from 'express';
import type { Logger } from 'pino';
import { stdSerializers } from 'pino';
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

/**
 * Request ids and one log line per request, at its end: `request completed` (info, warn from
 * 400) or `request errored` (error, from 500), with the request, the response, `responseTime`
 * and `requestId` — the line pino-http wrote. Unlike pino-http it creates no child loggers per
 * request (two each, with the request serialized into their bindings up front): an event stream
 * is open for hours, and what a request allocates at its start lives as long. The request is
 * serialized once, when its line is written.
 */
export function requestLogging(logger: Logger): RequestHandler {
  return (req, res, next) => {
    const incoming = req.headers['x-request-id'];
    const id = typeof incoming === 'string' && REQUEST_ID_PATTERN.test(incoming) ? incoming : null;
    req.id = id ?? randomUUID();
    req.serverLogger = logger;
    res.setHeader('X-Request-Id', req.id);
    const started = Date.now();
    // 'close' comes after 'finish', and also when the client went away first.
    res.once('close', () => logCompletion(logger, req, res, Date.now() - started));
    next();
  };
}

function logCompletion(
  logger: Logger,
  req: IncomingMessage,
  res: ServerResponse,
  responseTime: number,
): void {
  const status = res.statusCode;
  const line = {
    requestId: req.id,
    req: stdSerializers.req(req),
    res: stdSerializers.res(res),
    responseTime,
  };
  if (status >= 500) {
    logger.error(
      { ...line, err: new Error(`failed with status code ${status}`) },
      'request errored',
    );
  } else if (status >= 400) logger.warn(line, 'request completed');
  else logger.info(line, 'request completed');
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
