import type { GraphRunKwargs, Session } from '@cognition/contracts';
import type { RunFence } from '@cognition/storage';
import { isRunFenced, RUN_FENCE_KEY, scopedStore } from '@cognition/storage';
import type { RunnableConfig } from '@langchain/core/runnables';
import { Command } from '@langchain/langgraph';
import type {
  BaseCheckpointSaver,
  ChannelVersions,
  Checkpoint,
  CheckpointMetadata,
} from '@langchain/langgraph-checkpoint';
import { RuntimeError } from '../../errors';
import type { Outcome } from '../../run-outcome';
import type { CompiledUserGraph, UserGraph } from '../../user-graphs/user-graphs';
import type { ActiveRun, RunContext } from '../run-context';
import { cancelledOutcome, stopFenced, toRuntimeError } from '../run-context';
import { graphChunks } from './graph-chunks';
import { chunkJson } from './graph-json';

/**
 * A run of a `langgraph.json` graph (docs/langgraph-api.md): the graph streams on the session's
 * checkpoint thread with our storage's checkpointer, and each chunk becomes a `graph` event of
 * the run's durable log. Admission, leases, the finisher and recovery are the agent runs' own.
 */

/** What `RunExecutor` gives a graph run. */
export interface GraphRunInput {
  session: Session;
  callbackUrl: string | null;
  /** What the run was made with (stored with it, so any node can execute it). */
  graph: GraphRunKwargs;
  /** Taken up again after a crash: continues from the thread's last checkpoint of this run. */
  resumed?: boolean;
}

/**
 * The graph's own stream modes for the SDK's: `messages-tuple` is LangGraph.js's `messages`;
 * `messages` (partial) is made from the model's chunks and the state's messages (`messages` and
 * `values`, as LangGraph's server makes it; the LangGraph API turns them into
 * `messages/partial` and `messages/complete` parts); `events` has no graph mode: the run then
 * streams under `streamEvents` (graph-chunks.ts).
 */
const GRAPH_MODES: Readonly<Record<string, readonly string[]>> = {
  values: ['values'],
  updates: ['updates'],
  'messages-tuple': ['messages'],
  messages: ['messages', 'values'],
  custom: ['custom'],
  debug: ['debug'],
  tasks: ['tasks'],
  checkpoints: ['checkpoints'],
};

/** Executes the graph run; answers its outcome (never throws for a failure of the run). */
export async function runGraph(
  ctx: RunContext,
  active: ActiveRun,
  input: GraphRunInput,
): Promise<Outcome> {
  const { session, graph: kwargs } = input;
  const { emitter, controller, runId } = active;
  const signal = controller.signal;
  try {
    const userGraph = ctx.userGraphs.get(kwargs.graph_id);
    if (!userGraph) {
      throw new RuntimeError(
        'VALIDATION_ERROR',
        `No graph "${kwargs.graph_id}" in this server's langgraph.json`,
      );
    }
    const config = runConfig(kwargs, session, runId, active.fence);
    const graph = await graphOnStorage(userGraph, ctx.storage.checkpointer, config);
    const state = (await graph.getState(config)) as {
      config: RunnableConfig;
      metadata?: Record<string, unknown>;
    };
    const stored = await ctx.storage.runs.get(runId);
    const head = state.config.configurable?.['checkpoint_id'] as string | undefined;
    await ctx.storage.runs.update(
      runId,
      {
        status: 'running',
        startedAt: stored?.startedAt ?? new Date(),
        // What a rollback returns to: the thread's head before the run's first start.
        ...(stored?.startedAt ? {} : { baseCheckpointId: head ?? null }),
      },
      active.fence ?? undefined,
    );
    if (!input.resumed) emitter.emit({ type: 'status', status: 'thinking' });
    // A run taken up again continues from its own last checkpoint (LangGraph redoes the step
    // that was cut off); one cut off before its first checkpoint starts over from its input.
    const continues = input.resumed === true && state.metadata?.['run_id'] === runId;
    const start = continues
      ? null
      : kwargs.command
        ? new Command(kwargs.command as ConstructorParameters<typeof Command>[0])
        : (kwargs.input ?? null);
    const modes = [...new Set(kwargs.stream_mode.flatMap((m) => GRAPH_MODES[m] ?? []))];
    // Time travel: a run made with a checkpoint starts there (LangGraph forks the thread's
    // history at it); taken up again after its own first checkpoint, it continues from that.
    const from =
      kwargs.checkpoint_id !== undefined && !continues
        ? {
            configurable: { ...config.configurable, checkpoint_id: kwargs.checkpoint_id },
          }
        : {};
    const options = {
      ...config,
      // The graph's long-term memory (`config.store`): the backend's store, confined to the
      // session's tenant like the LangGraph API's `/store` routes.
      store: scopedStore(ctx.storage.store, session.scopes),
      ...from,
      // LangGraph's runtime context (a node's `runtime.context`), besides `configurable`.
      context: kwargs.context,
      streamMode: modes.length > 0 ? modes : ['values'],
      subgraphs: kwargs.stream_subgraphs,
      ...(kwargs.interrupt_before !== undefined
        ? { interruptBefore: kwargs.interrupt_before }
        : {}),
      ...(kwargs.interrupt_after !== undefined ? { interruptAfter: kwargs.interrupt_after } : {}),
      signal,
    };
    const events = kwargs.stream_mode.includes('events');
    for await (const { mode, namespace, data } of graphChunks(graph, start, options, events)) {
      emitter.emit({ type: 'graph', mode, namespace, data: chunkJson(mode, data) });
    }
    return signal.aborted ? cancelledOutcome(active.cancelReason) : { kind: 'completed' };
  } catch (error) {
    // Refused under the run's claim: another claim took it over (see run-executor).
    if (isRunFenced(error)) stopFenced(active, ctx.log);
    if (active.cancelReason === 'lost') return { kind: 'lost' };
    if (signal.aborted && !(error instanceof RuntimeError)) {
      return cancelledOutcome(active.cancelReason);
    }
    // The graph's own exception keeps its name and message for the LangGraph API's error part
    // (`{"error": "CustomError", "message": "Boo!"}`, as LangGraph's server sends it).
    const exception =
      error instanceof Error && !(error instanceof RuntimeError)
        ? { name: error.name, message: error.message }
        : undefined;
    return {
      kind: 'failed',
      error: graphRunError(error, ctx.maxSteps),
      ...(exception ? { exception } : {}),
    };
  }
}

/**
 * Why a graph run failed. A recursion limit is the graph's own (`recursion_limit`), not our
 * agents' step budget, so its error keeps LangGraph's name and message, as LangGraph's server
 * reports it.
 */
function graphRunError(error: unknown, maxSteps: number): RuntimeError {
  if (error instanceof Error && error.name === 'GraphRecursionError') {
    return new RuntimeError('TIMEOUT', `GraphRecursionError: ${error.message}`, { cause: error });
  }
  return toRuntimeError(error, maxSteps);
}

const stamping = new WeakMap<BaseCheckpointSaver, BaseCheckpointSaver>();

/**
 * `saver`, writing the run id of the config's metadata into each checkpoint's metadata (what
 * LangGraph Python's savers do; LangGraph.js's loop leaves it out): how a resumed run tells
 * its own checkpoints from those of the runs before it. One per saver, shared by every graph.
 */
/**
 * The graph of `userGraph` for `config`, checkpointing in our storage (`saver`): every run of
 * every graph, and every state update of a graph's thread, writes the session's thread there.
 */
export async function graphOnStorage(
  userGraph: UserGraph,
  saver: BaseCheckpointSaver,
  config: RunnableConfig,
): Promise<CompiledUserGraph> {
  const graph = await userGraph.graph(config);
  graph.checkpointer = stampingRunIds(saver);
  return graph;
}

function stampingRunIds(saver: BaseCheckpointSaver): BaseCheckpointSaver {
  let stamped = stamping.get(saver);
  if (!stamped) {
    stamped = new Proxy(saver, {
      get(target, key) {
        if (key === 'put') {
          return (
            config: RunnableConfig,
            checkpoint: Checkpoint,
            metadata: CheckpointMetadata,
            versions: ChannelVersions,
          ) => {
            const runId = config.metadata?.['run_id'];
            const stampedMetadata = runId === undefined ? metadata : { ...metadata, run_id: runId };
            return target.put(config, checkpoint, stampedMetadata, versions);
          };
        }
        const value = Reflect.get(target, key, target) as unknown;
        return typeof value === 'function' ? (value as () => unknown).bind(target) : value;
      },
    });
    stamping.set(saver, stamped);
  }
  return stamped;
}

/**
 * The run's config: the caller's, on the session's checkpoint thread, with the run id in the
 * metadata (LangGraph copies it into each checkpoint: how a resumed run finds its own).
 */
function runConfig(
  kwargs: GraphRunKwargs,
  session: Session,
  runId: string,
  fence: RunFence | null,
): RunnableConfig {
  // The API's `recursion_limit` (snake_case on the wire) is LangChain's `recursionLimit`.
  const { recursion_limit: limit, ...given } = kwargs.config as RunnableConfig & {
    recursion_limit?: unknown;
  };
  return {
    ...given,
    ...(typeof limit === 'number' ? { recursionLimit: limit } : {}),
    configurable: {
      ...given.configurable,
      ...kwargs.context,
      thread_id: session.threadId,
      checkpoint_ns: '',
      // Checkpoints and writes under the run's claim (never one a caller's config names).
      [RUN_FENCE_KEY]: fence ?? undefined,
    },
    metadata: { ...given.metadata, run_id: runId, thread_id: session.id },
  };
}
