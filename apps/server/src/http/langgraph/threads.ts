import type { ApiServices } from '@cognition/api';
import type { Run, Session } from '@cognition/contracts';
import type { CompiledUserGraph, UserGraph, UserGraphs } from '@cognition/runtime';
import { graphOnStorage } from '@cognition/runtime';
import type { Scope } from '@cognition/storage';
import type { RunnableConfig } from '@langchain/core/runnables';
import type { BaseCheckpointSaver, CheckpointTuple } from '@langchain/langgraph-checkpoint';
import { INTERRUPT } from '@langchain/langgraph';
import { z } from 'zod';
import { AGENT_GRAPH_PREFIX } from './assistants';
import { snapshotState } from './snapshots';
import {
  JsonObject,
  LangGraphHttpError,
  GRAPH_KEY,
  STATELESS_KEY,
  decodeMetadata,
  encodeMetadata,
  notFound,
  reservedMetadata,
  toWire,
} from './wire';

/**
 * Threads are sessions (docs/langgraph-api.md, "How it maps"): `thread_id` is the session id,
 * metadata is the session's, the values are those of the session's checkpoint thread. Every
 * read and write goes through the caller's scope, so another tenant's thread is not found.
 */

export type ThreadStatus = 'idle' | 'busy' | 'interrupted' | 'error';

export interface Thread {
  thread_id: string;
  created_at: string;
  updated_at: string;
  metadata: Record<string, unknown>;
  status: ThreadStatus;
  config: Record<string, unknown>;
  values: Record<string, unknown> | null;
  interrupts: Record<string, unknown>;
}

const ThreadId = z.uuid();
const Ttl = z
  .object({ ttl: z.number().positive(), strategy: z.literal('delete').default('delete') })
  .strict();

export const ThreadCreateSchema = z
  .object({
    thread_id: ThreadId.optional(),
    metadata: JsonObject.default({}),
    if_exists: z.enum(['raise', 'do_nothing']).default('raise'),
    ttl: Ttl.optional(),
  })
  .strict();

export const ThreadPatchSchema = z
  .object({ metadata: JsonObject.optional(), ttl: Ttl.optional() })
  .strict();

const STATUSES = ['idle', 'busy', 'interrupted', 'error'] as const;

export const ThreadCountSchema = z
  .object({ metadata: JsonObject.optional(), status: z.enum(STATUSES).optional() })
  .strict();

export const ThreadSearchSchema = ThreadCountSchema.extend({
  ids: z.array(ThreadId).max(1000).optional(),
  limit: z.number().int().min(1).max(1000).default(10),
  offset: z.number().int().min(0).default(0),
  sort_by: z.enum(['thread_id', 'status', 'created_at', 'updated_at']).optional(),
  sort_order: z.enum(['asc', 'desc']).optional(),
  select: z.array(z.string()).optional(),
}).strict();

export const ThreadHistorySchema = z
  .object({
    limit: z.number().int().min(1).max(1000).default(10),
    before: z.union([z.string(), JsonObject]).optional(),
    metadata: JsonObject.optional(),
    checkpoint: JsonObject.optional(),
  })
  .strict();

/** Most sessions a search with a status filter reads (the status is not a stored column). */
const STATUS_SCAN_LIMIT = 500;

export class Threads {
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

  /**
   * A copy of the thread (`POST /threads/{id}/copy`): our session fork with its history (every
   * checkpoint, same ids; messages get new ids), which remembers the source's graph.
   */
  async copy(threadId: string, scope: Scope): Promise<Thread> {
    const source = await this.session(threadId, scope);
    const graph = await this.graphOf(source);
    let copy = await this.services.sessions.fork(source.id, { history: true }, scope);
    // The copy is no stateless run's thread, whatever its source was.
    const { [STATELESS_KEY]: stateless, ...metadata } = copy.metadata;
    if (graph || stateless !== undefined) {
      copy = await this.services.sessions.update(
        copy.id,
        { metadata: { ...metadata, ...(graph ? { [GRAPH_KEY]: graph.graphId } : {}) } },
        scope,
      );
    }
    return this.view(copy);
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

  async create(
    body: z.output<typeof ThreadCreateSchema>,
    scope: Scope,
    /** Our own metadata besides the thread's (a stateless run's mark). */
    reserved: Record<string, string> = {},
  ): Promise<Thread> {
    if (body.thread_id !== undefined) {
      const existing = await this.services.storage.sessions.get(body.thread_id, scope);
      if (existing) {
        if (body.if_exists === 'do_nothing') return this.view(existing);
        throw new LangGraphHttpError(409, 'Thread already exists');
      }
    }
    const graphId = body.metadata['graph_id'];
    const agentName =
      typeof graphId === 'string' && graphId.startsWith(AGENT_GRAPH_PREFIX)
        ? graphId.slice(AGENT_GRAPH_PREFIX.length)
        : undefined;
    if (agentName !== undefined) await this.services.runs.validateSessionInput({ agentName });
    const session = await this.services.sessions.create(
      {
        ...(body.thread_id !== undefined ? { id: body.thread_id } : {}),
        ...(agentName !== undefined ? { agentName } : {}),
        metadata: { ...encodeMetadata(body.metadata), ...reserved },
        ...(body.ttl ? { expiresAt: new Date(Date.now() + body.ttl.ttl * 60_000) } : {}),
      },
      scope,
    );
    return this.view(session);
  }

  /** The session behind `threadId` in the caller's scope; 404 "Thread not found" otherwise. */
  async session(threadId: string, scope: Scope): Promise<Session> {
    const session = ThreadId.safeParse(threadId).success
      ? await this.services.storage.sessions.get(threadId, scope)
      : null;
    if (!session) throw notFound('Thread');
    return session;
  }

  async get(threadId: string, scope: Scope): Promise<Thread> {
    return this.view(await this.session(threadId, scope));
  }

  async patch(
    threadId: string,
    body: z.output<typeof ThreadPatchSchema>,
    scope: Scope,
  ): Promise<Thread> {
    const session = await this.session(threadId, scope);
    const metadata = body.metadata
      ? {
          ...encodeMetadata({ ...decodeMetadata(session.metadata), ...body.metadata }),
          // Our own keys stay (a stateless run's mark, a copy's graph).
          ...reservedMetadata(session.metadata),
        }
      : undefined;
    const updated = await this.services.sessions.update(
      session.id,
      {
        ...(metadata ? { metadata } : {}),
        ...(body.ttl ? { expiresAt: new Date(Date.now() + body.ttl.ttl * 60_000) } : {}),
      },
      scope,
    );
    return this.view(updated);
  }

  async search(body: z.output<typeof ThreadSearchSchema>, scope: Scope): Promise<Thread[]> {
    const threads = await this.matching(body, scope, body.offset + body.limit);
    const order = body.sort_order === 'asc' ? 1 : -1;
    const key = body.sort_by ?? 'created_at';
    threads.sort((a, b) => (a[key] < b[key] ? -order : a[key] > b[key] ? order : 0));
    return threads.slice(body.offset, body.offset + body.limit);
  }

  async count(body: z.output<typeof ThreadCountSchema>, scope: Scope): Promise<number> {
    if (body.status === undefined) {
      const page = await this.services.storage.sessions.list(
        { limit: 1, offset: 0, ...this.metadataFilter(body.metadata) },
        scope,
      );
      return page.total;
    }
    return (await this.matching(body, scope, STATUS_SCAN_LIMIT)).length;
  }

  private metadataFilter(metadata: Record<string, unknown> | undefined) {
    if (!metadata || Object.keys(metadata).length === 0) return {};
    const encoded = encodeMetadata(metadata);
    delete encoded['langgraph.json_keys'];
    return { metadata: encoded };
  }

  private async matching(
    body: z.output<typeof ThreadCountSchema> & { ids?: string[] | undefined },
    scope: Scope,
    wanted: number,
  ): Promise<Thread[]> {
    let sessions: Session[];
    if (body.ids) {
      const found = await Promise.all(
        body.ids.map((id) => this.services.storage.sessions.get(id, scope)),
      );
      sessions = found.filter((s): s is Session => s !== null);
    } else {
      const limit = body.status === undefined ? Math.min(wanted, 500) : STATUS_SCAN_LIMIT;
      const page = await this.services.storage.sessions.list(
        {
          limit,
          offset: 0,
          sort: 'created_at',
          order: 'desc',
          ...this.metadataFilter(body.metadata),
        },
        scope,
      );
      sessions = page.sessions;
    }
    const threads = await Promise.all(sessions.map((s) => this.view(s)));
    return threads.filter((t) => body.status === undefined || t.status === body.status);
  }

  async delete(threadId: string, scope: Scope): Promise<Session> {
    return this.session(threadId, scope);
  }

  /** `GET /threads/{id}/state`: the latest checkpoint of the session's thread. */
  async state(threadId: string, scope: Scope): Promise<Record<string, unknown>> {
    const session = await this.session(threadId, scope);
    return (await this.snapshot(session)) ?? stateOf(session, undefined);
  }

  async history(
    threadId: string,
    body: z.output<typeof ThreadHistorySchema>,
    scope: Scope,
  ): Promise<Record<string, unknown>[]> {
    const session = await this.session(threadId, scope);
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
    const tuple = await this.checkpointer.getTuple({
      configurable: { thread_id: session.threadId, checkpoint_ns: '' },
    });
    if (!tuple) return {};
    const waiting = interrupts ? pendingInterrupts(tuple) : [];
    return {
      ...valuesOf(tuple),
      ...(waiting.length > 0 ? { __interrupt__: waiting.map((i) => i.interrupt) } : {}),
    };
  }

  private async view(session: Session): Promise<Thread> {
    const runs = await this.services.storage.runs.list(session.id);
    const [latest] = runs;
    const tuple = await this.checkpointer.getTuple({
      configurable: { thread_id: session.threadId, checkpoint_ns: '' },
    });
    // A graph run that ended with steps left (`interrupt()`, `interrupt_before`/`_after`):
    // the thread is interrupted, and waits on its tasks' interrupts, per task (LangGraph's rule).
    const interrupts: Record<string, unknown[]> = {};
    let pending = false;
    if (latest?.kwargs && latest.status === 'completed' && tuple) {
      const state = await this.snapshot(session, undefined, runs);
      const tasks = (state?.['tasks'] ?? []) as { id: string; interrupts: unknown[] }[];
      pending = ((state?.['next'] ?? []) as unknown[]).length > 0;
      for (const task of tasks) {
        if (task.interrupts.length > 0) interrupts[task.id] = task.interrupts;
      }
    }
    // A run paused for a decision: its pending tool calls, under the run's id.
    if (latest?.status === 'requires_action' && latest.pendingAction) {
      interrupts[latest.id] = [{ value: latest.pendingAction, id: latest.id }];
    }
    return {
      thread_id: session.id,
      created_at: session.createdAt.toISOString(),
      updated_at: session.updatedAt.toISOString(),
      metadata: decodeMetadata(session.metadata),
      status: pending ? 'interrupted' : statusOf(latest?.status),
      config: {},
      values: tuple ? valuesOf(tuple) : null,
      interrupts,
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

function statusOf(run: string | undefined): ThreadStatus {
  if (run === 'queued' || run === 'running' || run === 'pending') return 'busy';
  if (run === 'requires_action') return 'interrupted';
  if (run === 'failed') return 'error';
  return 'idle';
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
function valuesOf(tuple: CheckpointTuple): Record<string, unknown> {
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
