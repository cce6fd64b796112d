import pino from 'pino';
import type { DestinationStream, Logger } from 'pino';
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
 * The process logger on stdout: JSON lines, or pino-pretty's one-line-per-event text for a
 * person at a terminal. Both write synchronously: nothing is buffered at exit, so a server whose
 * log reader went away (EPIPE; pino then drops logs) still exits instead of retrying a final
 * flush forever. pino-pretty runs in-process as a stream (not a transport worker thread) for the
 * same reason, and is loaded only when asked for (JSON, what services and tests read, is the
 * common case, and every start would otherwise pay for loading it).
 */
export async function createProcessLogger(
  level: LogLevel,
  format: 'json' | 'pretty',
): Promise<Logger> {
  if (format === 'json') return createLogger(level, pino.destination({ dest: 1, sync: true }));
  const { default: pretty } = await import('pino-pretty');
  return createLogger(
    level,
    pretty({
      sync: true,
      colorize: true,
      translateTime: 'SYS:HH:MM:ss.l',
      singleLine: true,
      ignore: 'pid,hostname,service',
    }),
  );
}

/** A logger writing JSON lines to `destination` (stdout by default; a test's capture stream). */
export function createLogger(
  level: LogLevel,
  destination: DestinationStream = pino.destination({ dest: 1, sync: true }),
): Logger {
  return pino(
    {
      level,
      base: { service: 'cognition' },
      redact: { paths: REDACTED_PATHS, censor: '[redacted]' },
      timestamp: pino.stdTimeFunctions.isoTime,
    },
    destination,
  );
}
