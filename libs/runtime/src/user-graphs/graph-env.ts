import { RuntimeError, errorMessage } from '../errors';
import type { LangGraphConfig } from './langgraph-config';

/** A system assistant's configuration from `LANGGRAPH_CONFIG`: its `context` and the rest. */
export interface GraphDefaults {
  config: Record<string, unknown>;
  context: Record<string, unknown>;
}

/**
 * Applies `langgraph.json`'s `env` to this process before the graphs load (graph modules read
 * it at load): a `.env` file (`process.loadEnvFile`) or the map. A variable the server's own
 * environment already sets is kept, so an operator's setting wins over the file.
 */
export function applyGraphEnv(config: LangGraphConfig, env: NodeJS.ProcessEnv = process.env): void {
  if (config.env === null) return;
  if (typeof config.env === 'string') {
    try {
      process.loadEnvFile(config.env);
    } catch (error) {
      throw new RuntimeError(
        'VALIDATION_ERROR',
        `${config.path}: env: cannot read ${config.env}: ${errorMessage(error)}`,
      );
    }
    return;
  }
  for (const [name, value] of Object.entries(config.env)) env[name] ??= value;
}

/**
 * `LANGGRAPH_CONFIG` (JSON `{graphId: {configurable…, context…}}`), as LangGraph's server reads
 * it: each graph's system assistant gets that graph's entry, `context` apart, as its config.
 */
export function graphDefaults(
  env: NodeJS.ProcessEnv = process.env,
): ReadonlyMap<string, GraphDefaults> {
  const text = env['LANGGRAPH_CONFIG'];
  if (text === undefined || text.trim() === '') return new Map();
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch (error) {
    throw new RuntimeError(
      'VALIDATION_ERROR',
      `LANGGRAPH_CONFIG: not JSON: ${errorMessage(error)}`,
    );
  }
  const isObject = (v: unknown): v is Record<string, unknown> =>
    v !== null && typeof v === 'object' && !Array.isArray(v);
  if (!isObject(parsed) || !Object.values(parsed).every(isObject)) {
    throw new RuntimeError(
      'VALIDATION_ERROR',
      'LANGGRAPH_CONFIG: expected {"<graph id>": {<config>}, …}',
    );
  }
  return new Map(
    Object.entries(parsed).map(([graphId, entry]) => {
      const { context, ...config } = entry as Record<string, unknown>;
      return [graphId, { config, context: isObject(context) ? context : {} }];
    }),
  );
}
