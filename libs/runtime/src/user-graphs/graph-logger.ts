import type { Logger } from '../logger';

/**
 * Where `getLogger()` of `@langchain/langgraph-sdk/logging` looks for the platform's logger: graph
 * code calls it at module load (`const logger = getLogger()`), and it throws when nothing is
 * registered there.
 */
const GLOBAL_LOGGER = Symbol.for('langgraph.api.sdk-logger');

type Level = keyof Logger;

/** The SDK's leveled methods (winston's names) onto ours. */
const LEVELS: Record<string, Level> = {
  error: 'error',
  warn: 'warn',
  info: 'info',
  help: 'info',
  data: 'info',
  prompt: 'info',
  http: 'info',
  input: 'info',
  verbose: 'debug',
  debug: 'debug',
  silly: 'debug',
};

/**
 * Registers `logger` as the graphs' logger: `logger.warn("message", {meta})` (the SDK's
 * `(message, ...meta)` or `(object)` call) becomes a log line of ours with the meta as fields.
 */
export function registerGraphLogger(logger: Logger): void {
  const adapter: Record<string, (message: unknown, ...meta: unknown[]) => unknown> = {};
  for (const [name, level] of Object.entries(LEVELS)) {
    adapter[name] = (message, ...meta) => {
      const fields = Object.assign(
        { source: 'graph' },
        ...meta.filter((m): m is object => m !== null && typeof m === 'object'),
      ) as object;
      if (typeof message === 'string') logger[level](fields, message);
      else if (message !== null && typeof message === 'object')
        logger[level]({ ...fields, ...message });
      else logger[level](fields, String(message));
      return adapter;
    };
  }
  (globalThis as Record<symbol, unknown>)[GLOBAL_LOGGER] = adapter;
}
