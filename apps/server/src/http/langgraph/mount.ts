import type { ApiServices, AuthConfig, Caller } from '@cognition/api';
import { createApiContext, createCaller } from '@cognition/api';
import type { UserGraphs } from '@cognition/runtime';
import type { Session } from '@cognition/contracts';
import type { AssistantStore, CheckpointRetentionStore } from '@cognition/storage';
import { pruneThread } from '@cognition/storage';
import type { BaseCheckpointSaver, BaseStore } from '@langchain/langgraph-checkpoint';
import express from 'express';
import type { Express, Request, Response } from 'express';
import { z } from 'zod';
import { requestIdOf } from '../request-log';
import { mountAssistantRoutes } from './assistant-routes';
import { Assistants } from './assistants';
import { ThreadHistorySchema, StateViews } from './state-views';
import {
  ThreadCountSchema,
  ThreadCreateSchema,
  ThreadPatchSchema,
  ThreadSearchSchema,
  Threads,
} from './threads';
import {
  CronCountSchema,
  CronCreateSchema,
  CronPatchSchema,
  CronSearchSchema,
  Crons,
} from './crons';
import { mountRunCreateRoutes } from './run-create-routes';
import { mountRunReadRoutes } from './run-read-routes';
import {
  PruneSchema,
  StateAtCheckpointSchema,
  StateUpdateSchema,
  ThreadState,
} from './thread-state';
import { Runs } from './runs';
import type { StatelessLogger } from './stateless';
import { StatelessThreads } from './stateless';
import { StoreApi } from './store';
import { mountThreadStream } from './thread-stream';
import { LangGraphHttpError, answerError, callerOf, parsePart } from './wire';

export interface LangGraphMountOptions {
  auth: AuthConfig;
  services: ApiServices;
  graphs: UserGraphs;
  /** Stored assistants (storage's), per tenant with their versions. */
  assistants: AssistantStore;
  /** The checkpointer of the sessions' threads (storage's). */
  checkpointer: BaseCheckpointSaver;
  /** The backend's store (`/store…`), confined per tenant by the routes. */
  store: BaseStore;
  /** Storage's checkpoint retention (`threads.prune` with `keep_latest`). */
  retention?: CheckpointRetentionStore;
  /** Tells `listener` of each run that stops executing on this node (stateless runs' clean-up). */
  onRunStopped?: (listener: (run: { runId: string; sessionId: string }) => void) => void;
  logger?: StatelessLogger;
  maxBodyBytes: number;
  /** Whether the server is draining (a thread's join stream then lets its client reconnect elsewhere). */
  shuttingDown?: () => boolean;
}

type Handler = (req: Request, caller: Caller) => Promise<unknown>;

const CheckpointParams = z.object({ id: z.string(), checkpoint: z.string().min(1) });

/**
 * Mounts the LangGraph API (docs/langgraph-api.md) beside the REST routes: `/ok`, `/info`,
 * `/assistants…` (assistant-routes.ts), `/threads…` and their runs (run-create-routes.ts,
 * run-read-routes.ts), crons (crons.ts), `/store…` (store.ts). Answers are JSON; errors are
 * `{detail}` with the status the SDK expects.
 */
export function mountLangGraph(app: Express, options: LangGraphMountOptions): void {
  const { auth, services } = options;
  const states = new StateViews(services, options.checkpointer, options.graphs);
  const threads = new Threads(services, states);
  const assistants = new Assistants(
    options.graphs,
    () => services.registry.listAgents(),
    options.assistants,
  );
  const json = express.json({ limit: options.maxBodyBytes, type: () => true });

  const route = (
    method: 'get' | 'post' | 'put' | 'patch' | 'delete',
    path: string,
    handle: Handler,
  ) => {
    app[method](path, json, async (req: Request, res: Response) => {
      try {
        const caller = callerOf(req, auth);
        const result = await handle(req, caller);
        if (result === undefined) res.status(204).end();
        else res.status(200).json(result);
      } catch (error) {
        answerError(req, res, error);
      }
    });
  };

  app.get('/ok', (_req, res) => {
    res.json({ ok: true });
  });
  app.get('/info', (_req, res) => {
    res.json({
      version: services.version,
      langgraph_js_version: null,
      context: 'cognition',
      flags: {
        assistants: true,
        crons: services.schedules !== undefined,
        langsmith: false,
        langsmith_tracing_replicas: false,
      },
    });
  });

  const graphId = (req: Request) => parsePart(z.object({ id: z.string() }), req.params, 'path').id;
  const deleteThread = async (id: string, req: Request, caller: Caller) => {
    const session = await threads.delete(id, caller.scope);
    // The session's own delete: its runs stop, its sandbox and workspace go, as on REST.
    const api = createCaller(createApiContext(services, caller, requestIdOf(req)));
    await api.sessions.delete({ id: session.id });
  };

  mountAssistantRoutes(route, {
    assistants,
    deleteThreadsOf: async (assistantId, req, caller) => {
      const search = ThreadSearchSchema.parse({
        metadata: { assistant_id: assistantId },
        limit: 1000,
      });
      for (const thread of await threads.search(search, caller.scope)) {
        await deleteThread(thread.thread_id, req, caller);
      }
    },
  });

  route('post', '/threads', async (req, caller) => {
    const { supersteps, ...body } = parsePart(ThreadCreateSchema, req.body, 'body');
    const existing =
      supersteps && body.thread_id !== undefined
        ? await services.storage.sessions.get(body.thread_id, caller.scope)
        : null;
    const thread = await threads.create(body, caller.scope);
    // A thread that already existed (`if_exists: do_nothing`) is answered as it is.
    if (!supersteps || existing) return thread;
    try {
      await state.bulk(await threads.session(thread.thread_id, caller.scope), supersteps);
    } catch (error) {
      // Made with its state or not at all.
      await deleteThread(thread.thread_id, req, caller);
      throw error;
    }
    return threads.get(thread.thread_id, caller.scope);
  });
  route('post', '/threads/search', async (req, caller) =>
    threads.search(parsePart(ThreadSearchSchema, req.body, 'body'), caller.scope),
  );
  route('post', '/threads/count', async (req, caller) =>
    threads.count(parsePart(ThreadCountSchema, req.body, 'body'), caller.scope),
  );
  route('get', '/threads/:id', async (req, caller) => threads.get(graphId(req), caller.scope));
  route('patch', '/threads/:id', async (req, caller) =>
    threads.patch(graphId(req), parsePart(ThreadPatchSchema, req.body, 'body'), caller.scope),
  );
  route('delete', '/threads/:id', async (req, caller) => {
    await deleteThread(graphId(req), req, caller);
    return undefined;
  });
  route('get', '/threads/:id/state', async (req, caller) =>
    states.state(await threads.session(graphId(req), caller.scope)),
  );
  const state = new ThreadState(services, threads, states, options.checkpointer);
  route('get', '/threads/:id/state/:checkpoint', async (req, caller) => {
    const params = parsePart(CheckpointParams, req.params, 'path');
    return state.at(params.id, params.checkpoint, caller.scope);
  });
  route('post', '/threads/:id/state/checkpoint', async (req, caller) => {
    const body = parsePart(StateAtCheckpointSchema, req.body, 'body');
    const { checkpoint_id: checkpointId } = body.checkpoint;
    return checkpointId === undefined
      ? states.state(await threads.session(graphId(req), caller.scope))
      : state.at(graphId(req), checkpointId, caller.scope);
  });
  route('post', '/threads/:id/state', async (req, caller) =>
    state.update(graphId(req), parsePart(StateUpdateSchema, req.body, 'body'), caller.scope),
  );
  route('post', '/threads/:id/copy', async (req, caller) => {
    // A copy is our session fork with its history: same agent, config and metadata, every
    // checkpoint copied (same checkpoint and message ids).
    return threads.copy(graphId(req), caller.scope);
  });
  route('post', '/threads/prune', async (req, caller) => {
    const body = parsePart(PruneSchema, req.body, 'body');
    let pruned = 0;
    for (const id of new Set(body.thread_ids)) {
      // A thread the caller cannot see (missing, another tenant's) is not counted.
      const visible = await services.storage.sessions.get(id, caller.scope);
      if (!visible) continue;
      if (body.strategy === 'delete') {
        await deleteThread(id, req, caller);
        pruned += 1;
      } else if (await keepLatest(visible)) {
        pruned += 1;
      }
    }
    return { pruned_count: pruned };
  });
  /**
   * `keep_latest`: every root checkpoint of the thread but its head goes (with their writes), as
   * retention's `keep_latest` does. A thread a run holds is left as it is (not counted).
   */
  const keepLatest = async (session: Session): Promise<boolean> => {
    const retention = options.retention;
    if (!retention) throw new LangGraphHttpError(501, 'Checkpoint retention is not available');
    if (await services.storage.runs.getActive(session.id)) return false;
    const batch = 500;
    for (;;) {
      const deleted = await pruneThread(
        retention,
        session.threadId,
        { kind: 'keep_last', count: 1 },
        { batch },
      );
      if (deleted < batch) return true;
    }
  };
  const runs = new Runs(services, assistants, threads, states);
  const crons = new Crons(services, assistants, threads, runs);
  route('post', '/runs/crons', async (req, caller) =>
    crons.create(null, parsePart(CronCreateSchema, req.body, 'body'), caller.scope),
  );
  route('post', '/threads/:id/runs/crons', async (req, caller) =>
    crons.create(graphId(req), parsePart(CronCreateSchema, req.body, 'body'), caller.scope),
  );
  route('post', '/runs/crons/search', async (req, caller) =>
    crons.search(parsePart(CronSearchSchema, req.body, 'body'), caller.scope),
  );
  route('post', '/runs/crons/count', async (req, caller) =>
    crons.count(parsePart(CronCountSchema, req.body, 'body'), caller.scope),
  );
  route('get', '/runs/crons/:id', async (req, caller) => crons.get(graphId(req), caller.scope));
  route('patch', '/runs/crons/:id', async (req, caller) =>
    crons.patch(graphId(req), parsePart(CronPatchSchema, req.body, 'body'), caller.scope),
  );
  route('delete', '/runs/crons/:id', async (req, caller) =>
    crons.delete(graphId(req), caller.scope),
  );
  const store = new StoreApi(options.store);
  route('put', '/store/items', (req, caller) => store.put(req, caller));
  route('get', '/store/items', (req, caller) => store.get(req, caller));
  route('delete', '/store/items', (req, caller) => store.delete(req, caller));
  route('post', '/store/items/search', (req, caller) => store.search(req, caller));
  route('post', '/store/namespaces', (req, caller) => store.namespaces(req, caller));
  // Stateless runs' threads go once their runs ended, whichever node ends them (stateless.ts).
  const stateless = new StatelessThreads(services, options.logger ?? { warn: () => undefined });
  options.onRunStopped?.((run) => {
    void stateless.cleanUp(run.sessionId, { sweep: false });
  });
  stateless.start();
  const runRoutes = { auth, services, states, runs, json, deleteThread, threads };
  mountRunCreateRoutes(app, runRoutes);
  mountRunReadRoutes(app, runRoutes);
  mountThreadStream(app, {
    auth,
    services,
    threads,
    states,
    shuttingDown: options.shuttingDown ?? (() => false),
  });
  route('post', '/threads/:id/history', async (req, caller) => {
    const body = parsePart(ThreadHistorySchema, req.body, 'body');
    return states.history(await threads.session(graphId(req), caller.scope), body);
  });
}
