import pino from 'pino';
import type { DestinationStream, Logger } from 'pino';
import pretty from 'pino-pretty';
import type { LogFormat, LogLevel } from '../config';

/**
 * Header paths never written to logs. API keys travel in `Authorization`; cookies and proxy
 * credentials are redacted for the same reason.
 */
const REDACTED_PATHS = [
  'req.headers.authorization',
  'req.headers["proxy-authorization"]',
  'req.headers.cookie',
  'req.headers["x-api-key"]',
  'res.headers["set-cookie"]',
];

/** `auto` is human-readable on a terminal and JSON lines for log collectors, pipes and files. */
export function effectiveLogFormat(
  format: LogFormat,
  stdoutIsTerminal: boolean,
): 'json' | 'pretty' {
  if (format === 'auto') return stdoutIsTerminal ? 'pretty' : 'json';
  return format;
}

/**
 * The process logger on stdout (or `destination`, e.g. a test's capture stream): JSON lines, or
 * pino-pretty's one-line-per-event text for a person at a terminal. Both write synchronously:
 * nothing is buffered at exit, so a server whose log reader went away (EPIPE; pino then drops
 * logs) still exits instead of retrying a final flush forever. pino-pretty runs in-process as a
 * stream (not a transport worker thread) for the same reason.
 */
export function createLogger(
  level: LogLevel,
  destination?: DestinationStream,
  format: 'json' | 'pretty' = 'json',
): Logger {
  const stream =
    destination ??
    (format === 'pretty'
      ? pretty({
          sync: true,
          colorize: true,
          translateTime: 'SYS:HH:MM:ss.l',
          singleLine: true,
          ignore: 'pid,hostname,service',
        })
      : pino.destination({ dest: 1, sync: true }));
  return pino(
    {
      level,
      base: { service: 'cognition' },
      redact: { paths: REDACTED_PATHS, censor: '[redacted]' },
      timestamp: pino.stdTimeFunctions.isoTime,
    },
    stream,
  );
}
