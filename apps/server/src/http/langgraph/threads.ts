import type { ApiServices } from '@cognition/api';
import type { Session } from '@cognition/contracts';
import type { Scope } from '@cognition/storage';
import { z } from 'zod';
import { AGENT_GRAPH_PREFIX } from './assistants';
import type { StateViews } from './state-views';
import { valuesOf } from './state-views';
import {
  JsonObject,
  LangGraphHttpError,
  GRAPH_KEY,
  STATELESS_KEY,
  decodeMetadata,
  encodeMetadata,
  notFound,
  reservedMetadata,
} from './wire';

/**
 * Thread records (docs/langgraph-api.md, "How it maps"): threads are sessions — `thread_id` is
 * the session id, metadata is the session's — made, found, searched, counted, patched, copied
 * and deleted here; their values, state and history are state-views.ts'. Every read and write
 * goes through the caller's scope, so another tenant's thread is not found.
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

/**
 * `POST /threads`' `supersteps`: LangGraph's bulk state update at creation (a copy of another
 * thread's history, say), one checkpoint per superstep. `command` updates are not served.
 */
export const SuperstepsSchema = z
  .array(
    z
      .object({
        updates: z
          .array(
            z
              .object({
                values: z.union([JsonObject, z.array(z.unknown()), z.null()]).optional(),
                as_node: z.string().min(1).optional(),
              })
              .strict(),
          )
          .min(1),
      })
      .strict(),
  )
  .min(1)
  .max(1000);

export const ThreadCreateSchema = z
  .object({
    thread_id: ThreadId.optional(),
    metadata: JsonObject.default({}),
    if_exists: z.enum(['raise', 'do_nothing']).default('raise'),
    ttl: Ttl.optional(),
    // Applied by the route after the thread is made (thread-state.ts, `bulk`).
    supersteps: SuperstepsSchema.optional(),
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

/** Most sessions a search with a status filter reads (the status is not a stored column). */
const STATUS_SCAN_LIMIT = 500;

export class Threads {
  constructor(
    private readonly services: ApiServices,
    private readonly states: StateViews,
  ) {}

  /**
   * A copy of the thread (`POST /threads/{id}/copy`): our session fork with its history (every
   * checkpoint and message with its id, as LangGraph's copy keeps them), which remembers the source's graph.
   */
  async copy(threadId: string, scope: Scope): Promise<Thread> {
    const source = await this.session(threadId, scope);
    const graph = await this.states.graphOf(source);
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
  private async view(session: Session): Promise<Thread> {
    const runs = await this.services.storage.runs.list(session.id);
    const [latest] = runs;
    const tuple = await this.states.head(session);
    // A graph run that ended with steps left (`interrupt()`, `interrupt_before`/`_after`):
    // the thread is interrupted, and waits on its tasks' interrupts, per task (LangGraph's rule).
    const interrupts: Record<string, unknown[]> = {};
    let pending = false;
    if (latest?.kwargs && latest.status === 'completed' && tuple) {
      const state = await this.states.snapshot(session, undefined, runs);
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

function statusOf(run: string | undefined): ThreadStatus {
  if (run === 'queued' || run === 'running' || run === 'pending') return 'busy';
  if (run === 'requires_action') return 'interrupted';
  if (run === 'failed') return 'error';
  return 'idle';
}
