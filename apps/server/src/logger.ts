import pino from 'pino';
import type { DestinationStream, Logger } from 'pino';
import type { LogLevel } from './env';

/**
 * Header paths never written to logs. API keys travel in `Authorization`; cookies and proxy
 * credentials are redacted for the same reason.
 */
export const REDACTED_PATHS = [
  'req.headers.authorization',
  'req.headers["proxy-authorization"]',
  'req.headers.cookie',
  'req.headers["x-api-key"]',
  'res.headers["set-cookie"]',
];

/**
 * The process logger: JSON lines on stdout (or `destination`, e.g. a test's capture stream).
 * Stdout is written synchronously: nothing is buffered at exit, so a server whose log reader
 * went away (EPIPE; pino then drops logs) still exits instead of retrying a final flush forever.
 */
export function createLogger(level: LogLevel, destination?: DestinationStream): Logger {
  return pino(
    {
      level,
      base: { service: 'cognition' },
      redact: { paths: REDACTED_PATHS, censor: '[redacted]' },
      timestamp: pino.stdTimeFunctions.isoTime,
    },
    destination ?? pino.destination({ dest: 1, sync: true }),
  );
}
