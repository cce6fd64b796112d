import type { Caller } from '@cognition/api';
import type { Express, Request, Response } from 'express';
import { z } from 'zod';
import { requestLog } from '../request-log';
import type { RunRoutesDeps } from './run-route-kit';
import { runRouteKit } from './run-route-kit';
import type { RunCreate } from './run-wire';
import { RunCreateSchema, runView } from './run-wire';
import { ThreadCreateSchema } from './threads';
import { StatelessThreads } from './stateless';
import { LangGraphHttpError, parsePart } from './wire';

/**
 * The LangGraph API's routes creating runs: on a thread (`/threads/{id}/runs`: background,
 * `/stream`, `/wait`) and stateless (`/runs`, `/runs/batch`, `/runs/stream`, `/runs/wait`).
 * Reading them is run-read-routes.ts's. See docs/langgraph-api.md for what each answers.
 */

/**
 * `POST /runs/batch`'s body: run create bodies. The SDK's `createBatch` sends each entry as the
 * caller wrote it — its own camelCase fields (`assistantId`, `onCompletion`, `streamMode`…) —
 * plus `assistant_id`: each top-level camelCase key is read as its snake_case field (one sent
 * in snake_case wins).
 */
const BatchSchema = z
  .array(
    z.preprocess(
      (entry) => {
        if (typeof entry !== 'object' || entry === null || Array.isArray(entry)) return entry;
        const out: Record<string, unknown> = {};
        for (const [key, value] of Object.entries(entry as Record<string, unknown>)) {
          const snake = key.replace(/[A-Z]/g, (c) => `_${c.toLowerCase()}`);
          if (snake === key || !(snake in entry)) out[snake] = value;
        }
        return out;
      },
      z.record(z.string(), z.unknown()),
    ),
  )
  .min(1)
  .max(100);

/** `parsePart` of a value found at `at` (`body`, or one entry of a batch: `body.1`). */
function parseAt<T extends z.ZodType>(schema: T, value: unknown, at: string): z.output<T> {
  if (at === 'body') return parsePart(schema, value, 'body');
  try {
    return parsePart(schema, value, 'body');
  } catch (error) {
    if (!(error instanceof LangGraphHttpError)) throw error;
    const errors = (error.errors ?? []).map((e) => ({ ...e, path: at + e.path.slice(4) }));
    const detail = errors.map((e) => `${e.path}: ${e.message}`).join('; ');
    throw new LangGraphHttpError(422, `Invalid body: ${detail}`, errors);
  }
}

export function mountRunCreateRoutes(app: Express, deps: RunRoutesDeps): void {
  const { runs, threads } = deps;
  const { handle, params, location, values, stream } = runRouteKit(deps);

  const create = async (req: Request, caller: Caller) => {
    const body: RunCreate = parsePart(RunCreateSchema, req.body, 'body');
    const created = await runs.create(params(req).id, body, caller.scope);
    return { ...created, body };
  };

  app.post(
    '/threads/:id/runs',
    deps.json,
    handle(async (req, res, caller) => {
      const { run, session, assistantId } = await create(req, caller);
      res.setHeader('Content-Location', location(run));
      res.status(200).json(runView(run, assistantId, await runs.metadataOf(run, session)));
    }),
  );

  /** Streams a run just created (`POST …/runs/stream`) to `res`. */
  const streamCreated = (
    req: Request,
    res: Response,
    caller: Caller,
    created: Awaited<ReturnType<typeof create>>,
    beforeEnd?: () => Promise<void>,
  ) => {
    const { run, session, body, after } = created;
    const requested = body.stream_mode ?? ['values'];
    return stream(
      req,
      res,
      { run, session, caller },
      {
        modes: new Set(Array.isArray(requested) ? requested : [requested]),
        resumable: body.stream_resumable === true,
        cancelOnDisconnect: body.on_disconnect === 'cancel',
        metadata: true,
        ...(after !== undefined ? { lastEventId: after } : {}),
        ...(beforeEnd ? { beforeEnd } : {}),
      },
    );
  };

  app.post(
    '/threads/:id/runs/stream',
    deps.json,
    handle(async (req, res, caller) => {
      await streamCreated(req, res, caller, await create(req, caller));
    }),
  );

  app.post(
    '/threads/:id/runs/wait',
    deps.json,
    handle(async (req, res, caller) => {
      const { run, session } = await create(req, caller);
      const answer = await values(session, run);
      res.setHeader('Content-Location', location(run));
      res.status(200).json(answer);
    }),
  );

  /**
   * A stateless run (`POST /runs/stream`, `/runs/wait`): a run on a thread of its own, made
   * for it and deleted once the run ended unless `on_completion` is `keep` (LangGraph's rule).
   */
  const createStateless = async (
    req: Request,
    caller: Caller,
    background = false,
    raw: unknown = req.body,
    part = 'body',
  ) => {
    const body: RunCreate = parseAt(RunCreateSchema, raw, part);
    // Recorded with the thread, so its clean-up does not depend on this node (stateless.ts).
    const reserved =
      body.on_completion === 'keep'
        ? {}
        : StatelessThreads.mark(background ? 'delete' : 'after_answer');
    const thread = await threads.create(ThreadCreateSchema.parse({}), caller.scope, reserved);
    try {
      return { ...(await runs.create(thread.thread_id, body, caller.scope)), body };
    } catch (error) {
      await deps.deleteThread(thread.thread_id, req, caller);
      throw error;
    }
  };
  /** After a stateless run: its thread goes once the run ended (a failure is only logged). */
  const completeStateless = async (
    req: Request,
    caller: Caller,
    created: Awaited<ReturnType<typeof createStateless>>,
  ) => {
    if (created.body.on_completion === 'keep') return;
    try {
      await runs.settle(created.run);
      await deps.deleteThread(created.session.id, req, caller);
    } catch (error) {
      const runId = created.run.id;
      requestLog(req).error({ err: error, runId }, 'deleting a stateless run thread failed');
    }
  };

  /**
   * A background stateless run (`POST /runs`): answered with the run at once; its thread is
   * deleted once the run ended by the node it ends on, not this request (stateless.ts).
   */
  app.post(
    '/runs',
    deps.json,
    handle(async (req, res, caller) => {
      const { run, session, assistantId } = await createStateless(req, caller, true);
      res.setHeader('Content-Location', location(run));
      res.status(200).json(runView(run, assistantId, await runs.metadataOf(run, session)));
    }),
  );

  /**
   * `POST /runs/batch`: background stateless runs, each on a thread of its own; the body is
   * checked whole first (a 422 names the entry, `body.1.input`), so a bad entry makes none.
   */
  app.post(
    '/runs/batch',
    deps.json,
    handle(async (req, res, caller) => {
      const entries = parsePart(BatchSchema, req.body, 'body');
      entries.forEach((entry, index) => parseAt(RunCreateSchema, entry, `body.${index}`));
      const created = [];
      for (const [index, entry] of entries.entries()) {
        created.push(await createStateless(req, caller, true, entry, `body.${index}`));
      }
      const views = [];
      for (const { run, session, assistantId } of created) {
        views.push(runView(run, assistantId, await runs.metadataOf(run, session)));
      }
      res.status(200).json(views);
    }),
  );

  app.post(
    '/runs/stream',
    deps.json,
    handle(async (req, res, caller) => {
      const created = await createStateless(req, caller);
      await streamCreated(req, res, caller, created, () => completeStateless(req, caller, created));
    }),
  );

  app.post(
    '/runs/wait',
    deps.json,
    handle(async (req, res, caller) => {
      const created = await createStateless(req, caller);
      const answer = await values(created.session, created.run);
      await completeStateless(req, caller, created);
      res.setHeader('Content-Location', location(created.run));
      res.status(200).json(answer);
    }),
  );
}
