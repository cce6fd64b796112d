import type { ApiServices } from '@cognition/api';
import type { Session } from '@cognition/contracts';
import type { UserGraph } from '@cognition/runtime';
import { graphOnStorage } from '@cognition/runtime';
import type { Scope } from '@cognition/storage';
import { rootCheckpoint } from '@cognition/storage';
import type { BaseCheckpointSaver } from '@langchain/langgraph-checkpoint';
import { z } from 'zod';
import type { StateViews } from './state-views';
import type { SuperstepsSchema, Threads } from './threads';
import { JsonObject, LangGraphHttpError } from './wire';

/**
 * A thread's state at a checkpoint and its update (`client.threads.getState(id, checkpoint)`,
 * `updateState`), docs/langgraph-api.md "Thread state".
 */

export const StateUpdateSchema = z
  .object({
    values: z.union([JsonObject, z.array(z.unknown()), z.null()]).optional(),
    as_node: z.string().min(1).optional(),
    checkpoint_id: z.string().min(1).optional(),
    checkpoint: z
      .object({
        checkpoint_id: z.string().min(1).optional(),
        checkpoint_ns: z.literal('').optional(),
      })
      .passthrough()
      .optional(),
  })
  .strict();

/**
 * `checkpoint` without a `checkpoint_id` (what `RemoteGraph.getState` sends for a thread's
 * config) is the thread's head, as in LangGraph.
 */
export const StateAtCheckpointSchema = z
  .object({
    checkpoint: z
      .object({
        checkpoint_id: z.string().min(1).optional(),
        checkpoint_ns: z.literal('').optional(),
      })
      .passthrough(),
    subgraphs: z.boolean().optional(),
  })
  .strict();

export const PruneSchema = z
  .object({
    thread_ids: z.array(z.uuid()).min(1).max(1000),
    strategy: z.enum(['delete', 'keep_latest']).default('delete'),
  })
  .strict();

export class ThreadState {
  constructor(
    private readonly services: ApiServices,
    private readonly threads: Threads,
    private readonly states: StateViews,
    private readonly checkpointer: BaseCheckpointSaver,
  ) {}

  /** The state at one checkpoint of the thread; 404 "Checkpoint not found" when it has none such. */
  async at(threadId: string, checkpointId: string, scope: Scope): Promise<Record<string, unknown>> {
    const session = await this.threads.session(threadId, scope);
    const state = await this.states.snapshot(session, checkpointId);
    if (!state) throw new LangGraphHttpError(404, 'Checkpoint not found');
    return state;
  }

  /**
   * LangGraph's `updateState` on the thread's graph (as `as_node` wrote `values`, after the
   * head or after `checkpoint_id`): a new checkpoint, which the next run continues from.
   */
  async update(
    threadId: string,
    body: z.output<typeof StateUpdateSchema>,
    scope: Scope,
  ): Promise<{ checkpoint: Record<string, string> }> {
    const session = await this.threads.session(threadId, scope);
    const graph = await this.graphOf(session);
    if (await this.services.storage.runs.getActive(session.id)) {
      throw new LangGraphHttpError(409, `Thread ${session.id} is busy: a run holds it`);
    }
    const after = body.checkpoint_id ?? body.checkpoint?.checkpoint_id;
    if (
      after !== undefined &&
      !(await rootCheckpoint(this.checkpointer, session.threadId, after))
    ) {
      throw new LangGraphHttpError(404, 'Checkpoint not found');
    }
    const config = {
      configurable: {
        thread_id: session.threadId,
        checkpoint_ns: '',
        ...(after !== undefined ? { checkpoint_id: after } : {}),
      },
    };
    const compiled = await graphOnStorage(graph, this.checkpointer, config);
    if (!compiled.updateState) {
      throw new LangGraphHttpError(501, `Graph "${graph.graphId}" cannot update its state`);
    }
    let written;
    try {
      written = await compiled.updateState(config, body.values ?? null, body.as_node);
    } catch (error) {
      throw invalidUpdate(error);
    }
    return {
      checkpoint: {
        thread_id: session.id,
        checkpoint_ns: '',
        checkpoint_id: String(written.configurable?.['checkpoint_id'] ?? ''),
      },
    };
  }

  /**
   * `supersteps` of a thread just made (`POST /threads`): LangGraph's `bulkUpdateState` on the
   * graph its `graph_id` names, one checkpoint per superstep. An agent's thread is a 409, as its
   * state updates are; an update LangGraph cannot place a 422 naming the superstep.
   */
  async bulk(session: Session, supersteps: z.output<typeof SuperstepsSchema>): Promise<void> {
    const graph = await this.graphOf(session);
    const config = { configurable: { thread_id: session.threadId, checkpoint_ns: '' } };
    const compiled = await graphOnStorage(graph, this.checkpointer, config);
    if (!compiled.bulkUpdateState) {
      throw new LangGraphHttpError(501, `Graph "${graph.graphId}" cannot update its state`);
    }
    const steps = supersteps.map((step) => ({
      updates: step.updates.map((update) => ({
        values: update.values ?? null,
        ...(update.as_node !== undefined ? { asNode: update.as_node } : {}),
      })),
    }));
    try {
      await compiled.bulkUpdateState(config, steps);
    } catch (error) {
      throw invalidUpdate(error, 'body.supersteps');
    }
  }

  /**
   * The graph whose state the thread holds: the one its runs ran, else the `graph_id` it was
   * created with. An agent's thread is updated by its runs only (409).
   */
  private async graphOf(session: Session): Promise<UserGraph> {
    const graph = await this.states.graphOf(session);
    if (!graph) {
      throw new LangGraphHttpError(
        409,
        `Thread ${session.id} holds no langgraph.json graph's state (an agent's thread changes through its runs; a new thread names its graph with graph_id)`,
      );
    }
    return graph;
  }
}

/**
 * LangGraph refuses an update it cannot place (`InvalidUpdateError`: an unknown node, an
 * ambiguous one without `as_node`, a value a channel rejects): a 422 naming the field (`at`: a
 * bulk update's, which LangGraph does not say more precisely).
 */
function invalidUpdate(error: unknown, at?: string): unknown {
  if (!(error instanceof Error) || error.name !== 'InvalidUpdateError') return error;
  const field = at ?? (/node/i.test(error.message) ? 'body.as_node' : 'body.values');
  return new LangGraphHttpError(422, `Invalid body: ${field}: ${error.message}`, [
    { path: field, message: error.message },
  ]);
}
