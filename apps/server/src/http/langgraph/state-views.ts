import type { ApiServices } from '@cognition/api';
import type { Run, Session } from '@cognition/contracts';
import type { CompiledUserGraph, UserGraph, UserGraphs } from '@cognition/runtime';
import { graphOnStorage } from '@cognition/runtime';
import type { RunnableConfig } from '@langchain/core/runnables';
import type { BaseCheckpointSaver, CheckpointTuple } from '@langchain/langgraph-checkpoint';
import { INTERRUPT } from '@langchain/langgraph';
import { z } from 'zod';
import { snapshotState } from './snapshots';
import { GRAPH_KEY, JsonObject, decodeMetadata, toWire } from './wire';

/**
 * The state views of a thread (docs/langgraph-api.md, "Thread state"): which graph its state
 * is of, that graph bound to our checkpointer, and its values, state and history as LangGraph
 * answers them — a `langgraph.json` graph's through the graph's own `getState`, an agent's from
 * its checkpoints. The thread records themselves (sessions) are threads.ts'; these take the
 * session the caller's scope already found.
 */

export const ThreadHistorySchema = z
  .object({
    limit: z.number().int().min(1).max(1000).default(10),
    before: z.union([z.string(), JsonObject]).optional(),
    metadata: JsonObject.optional(),
    checkpoint: JsonObject.optional(),
  })
  .strict();

export class StateViews {
  constructor(
    private readonly services: ApiServices,
    private readonly checkpointer: BaseCheckpointSaver,
    private readonly graphs: UserGraphs,
  ) {}

  /**
   * The `langgraph.json` graph whose state the thread holds: the one its runs ran, else (no
   * run yet) the `graph_id` it was created with; undefined for an agent's thread.
   */
  async graphOf(session: Session, runs?: readonly Run[]): Promise<UserGraph | undefined> {
    const listed = runs ?? (await this.services.storage.runs.list(session.id));
    const ran = listed.find((run) => run.kwargs !== null)?.kwargs?.graph_id;
    // A copy holds its source's graph's state before its first run.
    const named = session.metadata[GRAPH_KEY] ?? decodeMetadata(session.metadata)['graph_id'];
    const graphId = ran ?? (listed.length === 0 && typeof named === 'string' ? named : undefined);
    return graphId !== undefined ? this.graphs.get(graphId) : undefined;
  }

  /** The thread's head checkpoint (undefined before its first). */
  head(session: Session): Promise<CheckpointTuple | undefined> {
    return this.checkpointer.getTuple(threadConfig(session));
  }

  /** Whether the thread has this root checkpoint. */
  async hasCheckpoint(session: Session, checkpointId: string): Promise<boolean> {
    const tuple = await this.checkpointer.getTuple(threadConfig(session, checkpointId));
    return tuple?.checkpoint.id === checkpointId;
  }

  /** The thread's graph bound to our checkpointer, for `config` (the session's thread). */
  async compiled(session: Session, graph: UserGraph, checkpointId?: string) {
    const config = threadConfig(session, checkpointId);
    return { config, graph: await graphOnStorage(graph, this.checkpointer, config) };
  }

  /**
   * The state at the thread's head (or at `checkpointId`), as LangGraph answers it: a graph's
   * thread through the graph's own `getState` (`next`, `tasks`, `interrupts`); an agent's from
   * its checkpoint. Undefined for a checkpoint the thread does not have.
   */
  async snapshot(
    session: Session,
    checkpointId?: string,
    runs?: readonly Run[],
  ): Promise<Record<string, unknown> | undefined> {
    if (checkpointId !== undefined && !(await this.hasCheckpoint(session, checkpointId))) {
      return undefined;
    }
    const graph = await this.graphOf(session, runs);
    if (graph) {
      const { config, graph: compiled } = await this.compiled(session, graph, checkpointId);
      return snapshotState(session, await compiled.getState(config));
    }
    const tuple = await this.checkpointer.getTuple(threadConfig(session, checkpointId));
    if (checkpointId !== undefined && tuple?.checkpoint.id !== checkpointId) return undefined;
    return this.withPause(session, stateOf(session, tuple), runs);
  }

  /**
   * An agent's thread whose last run waits for a decision: its head's `next` is the tools step,
   * with one task whose interrupt is what the thread's `interrupts` hold under the run's id (what
   * `useStream` reads from the thread's head to show a pending interrupt after a reload).
   */
  private async withPause(
    session: Session,
    state: Record<string, unknown>,
    runs?: readonly Run[],
  ): Promise<Record<string, unknown>> {
    const [latest] = runs ?? (await this.services.storage.runs.list(session.id));
    if (latest?.status !== 'requires_action' || !latest.pendingAction) return state;
    const head = await this.checkpointer.getTuple(threadConfig(session));
    const at = (state['checkpoint'] as { checkpoint_id?: string } | null)?.checkpoint_id;
    if (!head || at !== head.checkpoint.id) return state;
    const interrupts = [{ value: latest.pendingAction, id: latest.id }];
    const task = {
      id: latest.id,
      name: 'tools',
      path: ['__pregel_pull', 'tools'],
      error: null,
      interrupts,
      checkpoint: null,
      state: null,
      result: null,
    };
    return { ...state, next: ['tools'], tasks: [task], interrupts };
  }

  /** `GET /threads/{id}/state`: the latest checkpoint of the session's thread. */
  async state(session: Session): Promise<Record<string, unknown>> {
    return (await this.snapshot(session)) ?? stateOf(session, undefined);
  }

  async history(
    session: Session,
    body: z.output<typeof ThreadHistorySchema>,
  ): Promise<Record<string, unknown>[]> {
    const before =
      typeof body.before === 'string'
        ? { configurable: { checkpoint_id: body.before } }
        : body.before;
    const states: Record<string, unknown>[] = [];
    // `checkpoint` narrows the listing as LangGraph's does: its keys (a `checkpoint_id`) join
    // the thread's config, so the checkpointer lists that checkpoint.
    const at = body.checkpoint?.['checkpoint_id'];
    const config = threadConfig(session, typeof at === 'string' ? at : undefined);
    const options = {
      limit: body.limit,
      ...(before ? { before: before as RunnableConfig } : {}),
      ...(body.metadata ? { filter: body.metadata } : {}),
    };
    // A graph's thread: LangGraph's own history, each entry with its `next`, tasks, interrupts.
    const graph = await this.graphOf(session);
    const compiled: CompiledUserGraph | undefined = graph
      ? (await this.compiled(session, graph)).graph
      : undefined;
    if (compiled?.getStateHistory) {
      for await (const snapshot of compiled.getStateHistory(config, options)) {
        states.push(snapshotState(session, snapshot));
      }
      return states;
    }
    const runs = await this.services.storage.runs.list(session.id);
    for await (const tuple of this.checkpointer.list(config, options)) {
      states.push(await this.withPause(session, stateOf(session, tuple), runs));
    }
    return states;
  }

  /**
   * The thread's current values (the session's checkpoint), `{}` before its first run. With
   * `interrupts` (a graph run's answer), what its `interrupt()` calls wait on, as LangGraph
   * answers them: under `__interrupt__`.
   */
  async values(session: Session, interrupts = false): Promise<Record<string, unknown>> {
    const tuple = await this.head(session);
    if (!tuple) return {};
    const waiting = interrupts ? pendingInterrupts(tuple) : [];
    return {
      ...valuesOf(tuple),
      ...(waiting.length > 0 ? { __interrupt__: waiting.map((i) => i.interrupt) } : {}),
    };
  }
}

/** The config of the session's checkpoint thread (at `checkpointId`, or its head). */
function threadConfig(session: Session, checkpointId?: string): RunnableConfig {
  return {
    configurable: {
      thread_id: session.threadId,
      checkpoint_ns: '',
      ...(checkpointId !== undefined ? { checkpoint_id: checkpointId } : {}),
    },
  };
}
/** What `interrupt()` calls wait on at a checkpoint: its pending interrupt writes, per task. */
function pendingInterrupts(tuple: CheckpointTuple): { task: string; interrupt: unknown }[] {
  return (tuple.pendingWrites ?? [])
    .filter(([, channel]) => channel === INTERRUPT)
    .flatMap(([task, , value]) =>
      (Array.isArray(value) ? value : [value]).map((interrupt) => ({
        task,
        interrupt: toWire(interrupt),
      })),
    );
}

/** The state channels of a checkpoint (LangGraph's own `__…__` channels left out). */
export function valuesOf(tuple: CheckpointTuple): Record<string, unknown> {
  const values = Object.entries(tuple.checkpoint.channel_values).filter(
    ([key]) => !key.startsWith('__') && !key.startsWith('branch:'),
  );
  return toWire(Object.fromEntries(values)) as Record<string, unknown>;
}

export function stateOf(
  session: Session,
  tuple: CheckpointTuple | undefined,
): Record<string, unknown> {
  const point = (t: CheckpointTuple['config'] | undefined) =>
    t?.configurable?.['checkpoint_id']
      ? {
          thread_id: session.id,
          checkpoint_ns: '',
          checkpoint_id: t.configurable['checkpoint_id'] as string,
        }
      : null;
  return {
    values: tuple ? valuesOf(tuple) : {},
    next: [],
    tasks: [],
    checkpoint: point(tuple?.config),
    parent_checkpoint: point(tuple?.parentConfig),
    metadata: tuple?.metadata ?? {},
    created_at: tuple?.checkpoint.ts ?? null,
    interrupts: [],
  };
}
