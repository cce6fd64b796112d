import { readFile } from 'node:fs/promises';
import { existsSync } from 'node:fs';
import { resolve } from 'node:path';
import type { RunnableConfig } from '@langchain/core/runnables';
import { RuntimeError, errorMessage } from '../errors';
import type { Logger } from '../logger';
import { silentLogger } from '../logger';
import type { GraphDefaults } from './graph-env';
import { applyGraphEnv, graphDefaults } from './graph-env';
import { registerGraphLogger } from './graph-logger';
import type { GraphSpec, LangGraphConfig } from './langgraph-config';
import { parseLangGraphConfig } from './langgraph-config';

/**
 * What this server needs of a compiled LangGraph graph (a `Pregel`). Checked by shape, not by
 * class: the user's module may resolve its own copy of `@langchain/langgraph`.
 */
export interface CompiledUserGraph {
  invoke(input: unknown, config?: RunnableConfig): Promise<unknown>;
  stream(input: unknown, config?: RunnableConfig): Promise<AsyncIterable<unknown>>;
  /** LangChain's `streamEvents` (`version: "v2"`): what the `events` stream mode runs. */
  streamEvents?(input: unknown, config: RunnableConfig & { version: 'v2' }): AsyncIterable<unknown>;
  getState(config: RunnableConfig): Promise<unknown>;
  /** LangGraph's checkpoints of the thread, newest first, as state snapshots. */
  getStateHistory?(
    config: RunnableConfig,
    options?: { limit?: number; before?: RunnableConfig; filter?: Record<string, unknown> },
  ): AsyncIterable<unknown>;
  /** The graph's nodes by name (`Pregel.nodes`). */
  nodes?: Record<string, unknown>;
  /** LangGraph's state update (`Pregel.updateState`): the config of the checkpoint it wrote. */
  updateState?(config: RunnableConfig, values: unknown, asNode?: string): Promise<RunnableConfig>;
  /**
   * LangGraph's bulk state update (`Pregel.bulkUpdateState`): one checkpoint per superstep, each
   * applying its updates together; the config of the last checkpoint it wrote.
   */
  bulkUpdateState?(
    config: RunnableConfig,
    supersteps: { updates: { values: unknown; asNode?: string }[] }[],
  ): Promise<RunnableConfig>;
  getGraphAsync?(config?: RunnableConfig): Promise<unknown>;
  getGraph?(config?: RunnableConfig): unknown;
  checkpointer?: unknown;
  name?: string;
}

/** A graph of `langgraph.json`, loaded: `graph(config)` answers the graph a run executes. */
export interface UserGraph {
  graphId: string;
  file: string;
  exportName: string;
  /** `compiled`: the export is the graph (or a builder, compiled once); `factory`: a function of the run's config. */
  kind: 'compiled' | 'factory';
  /** The graph for a run with `config`: the same instance, or the factory's answer for it. */
  graph(config: RunnableConfig): Promise<CompiledUserGraph>;
  /** The graph as loaded at start (the factory's answer for an empty config), for its structure. */
  loaded: CompiledUserGraph;
}

/** The graphs of one `langgraph.json`, loaded once at start. */
export class UserGraphs {
  private readonly byId: ReadonlyMap<string, UserGraph>;

  constructor(
    readonly config: LangGraphConfig | null,
    graphs: readonly UserGraph[],
    private readonly defaults: ReadonlyMap<string, GraphDefaults> = new Map(),
  ) {
    this.byId = new Map(graphs.map((g) => [g.graphId, g]));
  }

  /** The config and context of the graph's system assistant (`LANGGRAPH_CONFIG`; else empty). */
  defaultsOf(graphId: string): GraphDefaults {
    return this.defaults.get(graphId) ?? { config: {}, context: {} };
  }

  static empty(): UserGraphs {
    return new UserGraphs(null, []);
  }

  get(graphId: string): UserGraph | undefined {
    return this.byId.get(graphId);
  }

  list(): UserGraph[] {
    return [...this.byId.values()];
  }
}

/**
 * Where the server's `langgraph.json` is: `explicit` (the setting, resolved against `cwd`;
 * it must exist), else `langgraph.json` in `cwd` when there is one, else none.
 */
export function langGraphConfigPath(explicit: string | undefined, cwd: string): string | null {
  if (explicit !== undefined) return resolve(cwd, explicit);
  const fallback = resolve(cwd, 'langgraph.json');
  return existsSync(fallback) ? fallback : null;
}

/**
 * Reads `path` and loads every graph it lists, TypeScript or JavaScript (through jiti, so no
 * build step and no loader flag on the server's node). Fails on the first graph that does not
 * load, with a message naming the config file, the graph id, its module and its export.
 * `logger` is what graph code gets from `getLogger()` of `@langchain/langgraph-sdk/logging`.
 */
export async function loadUserGraphs(
  path: string,
  logger: Logger = silentLogger,
): Promise<UserGraphs> {
  // Before any module loads: graph code may call the SDK's `getLogger()` at load.
  registerGraphLogger(logger);
  let text: string;
  try {
    text = await readFile(path, 'utf8');
  } catch (error) {
    throw new RuntimeError('VALIDATION_ERROR', `${path}: cannot read: ${errorMessage(error)}`);
  }
  const config = parseLangGraphConfig(text, path);
  applyGraphEnv(config);
  const defaults = graphDefaults();
  const graphs: UserGraph[] = [];
  for (const spec of config.graphs) graphs.push(await loadGraph(spec, path));
  return new UserGraphs(config, graphs, defaults);
}

function loadError(spec: GraphSpec, configPath: string, problem: string): RuntimeError {
  return new RuntimeError(
    'VALIDATION_ERROR',
    `${configPath}: graph "${spec.graphId}" (${spec.file}, export "${spec.exportName}"): ${problem}`,
    { issues: [{ path: `graphs.${spec.graphId}`, message: problem }] },
  );
}

async function loadGraph(spec: GraphSpec, configPath: string): Promise<UserGraph> {
  if (!existsSync(spec.file)) throw loadError(spec, configPath, 'the module does not exist');
  // No file cache: nothing is written beside the user's code or in the temp folder.
  // Loaded the CommonJS way (jiti's synchronous call, `require` export conditions): the graph
  // then shares the server's own CommonJS copy of `@langchain/langgraph` and `@langchain/core`
  // (one checkpoint serializer, one `interrupt()` context), and loading works the same inside a
  // test runner's VM context, which has no dynamic `import()`. The cost: no top-level `await` in
  // a graph module. No file cache: nothing is written beside the user's code or in /tmp.
  // jiti itself is loaded only when a langgraph.json names graphs.
  const { createJiti } = await import('jiti');
  // interopDefault: a module's `import path from 'node:path'` is compiled to `require(...)
  // .default`, which a CommonJS module (Node's built-ins, most npm packages) lacks; jiti's interop
  // answers the module itself there, as Node's ESM loader does. Without it the import is undefined.
  const jiti = createJiti(spec.file, { fsCache: false, interopDefault: true, tryNative: false });
  let module: Record<string, unknown>;
  try {
    module = jiti(spec.file) as Record<string, unknown>;
  } catch (error) {
    throw loadError(spec, configPath, `the module failed to load: ${messageOf(error)}`);
  }
  if (!(spec.exportName in module)) {
    const names = Object.keys(module).join(', ') || 'none';
    throw loadError(spec, configPath, `no such export (the module exports: ${names})`);
  }
  // A promise of a graph (`export const graph = (async () => builder.compile())()`) is awaited,
  // as LangGraph's own server does.
  let value: unknown;
  try {
    value = await module[spec.exportName];
  } catch (error) {
    throw loadError(spec, configPath, `the export's promise rejected: ${messageOf(error)}`);
  }
  const compiled = asCompiled(value);
  if (compiled) {
    return { ...spec, kind: 'compiled', loaded: compiled, graph: () => Promise.resolve(compiled) };
  }
  if (typeof value !== 'function') {
    throw loadError(
      spec,
      configPath,
      'the export is neither a graph (compiled or not) nor a function returning one',
    );
  }
  const factory = value as (config: RunnableConfig) => unknown;
  const make = async (config: RunnableConfig): Promise<CompiledUserGraph> => {
    const made = asCompiled(await factory(config));
    if (!made) throw loadError(spec, configPath, 'the factory did not return a graph');
    return made;
  };
  let loaded: CompiledUserGraph;
  try {
    loaded = await make({ configurable: {} });
  } catch (error) {
    if (error instanceof RuntimeError) throw error;
    throw loadError(spec, configPath, `the factory failed: ${messageOf(error)}`);
  }
  return { ...spec, kind: 'factory', loaded, graph: make };
}

/** The compiled graph `value` is or compiles to; null when it is neither. */
function asCompiled(value: unknown): CompiledUserGraph | null {
  if (value === null || typeof value !== 'object') return null;
  const candidate = value as Partial<CompiledUserGraph> & { compile?: unknown };
  if (
    typeof candidate.invoke === 'function' &&
    typeof candidate.stream === 'function' &&
    typeof candidate.getState === 'function'
  ) {
    return candidate as CompiledUserGraph;
  }
  // An uncompiled StateGraph: compiled once, as `langgraph dev` does.
  if (typeof candidate.compile === 'function') {
    return asCompiled((candidate.compile as () => unknown).call(candidate));
  }
  return null;
}

/** The message of an error thrown by user code, which may come from another realm (no `instanceof Error`). */
function messageOf(error: unknown): string {
  const message = (error as { message?: unknown } | null)?.message;
  return typeof message === 'string' ? message : errorMessage(error);
}
