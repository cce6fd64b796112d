import type { ApiServices, AuthConfig, Caller } from '@cognition/api';
import type { Run, Session } from '@cognition/contracts';
import { isTerminalEvent } from '@cognition/contracts';
import type { Express, Request, RequestHandler, Response } from 'express';
import { z } from 'zod';
import { requestLog } from '../request-log';
import { PartialMessages } from './messages-mode';
import { STREAM_MODES, openStream, partsOf, writePart } from './run-stream';
import type { RunCreate, Runs } from './runs';
import { CancelQuerySchema, RunCreateSchema, RunListQuerySchema, runView } from './runs';
import type { StateViews } from './state-views';
import type { Threads } from './threads';
import { ThreadCreateSchema } from './threads';
import { StatelessThreads } from './stateless';
import { LangGraphHttpError, answerError, callerOf, parsePart } from './wire';

/**
 * The run routes of the LangGraph API (`/threads/{id}/runs…`): create (background), stream,
 * wait, list, get, cancel, join, join stream; stateless stream and wait (`/runs/stream`, `/runs/wait`). See docs/langgraph-api.md for what each answers.
 */

/** What a background run's join stream sends when the request names no mode. */
const ALL_MODES = ['values', 'updates', 'messages-tuple', 'custom'];
const HEARTBEAT_MS = 15_000;

const Params = z.object({ id: z.string(), run: z.string().optional() });

// `namespace` and `checkpoint_id` are what SDK 1.15's `joinStream` may add (`useStream` passes
// the checkpoint when it rejoins); a join follows the run's own stored parts either way, so they
// are accepted and narrow nothing (docs/langgraph-api.md).
const JoinStreamQuerySchema = z
  .object({
    cancel_on_disconnect: z.enum(['0', '1', 'true', 'false']).default('0'),
    // One mode, a JSON array (SDK 2.0) or the parameter repeated (SDK 1.15).
    stream_mode: z.union([z.string(), z.array(z.string())]).optional(),
    namespace: z.union([z.string(), z.array(z.string())]).optional(),
    checkpoint_id: z.string().optional(),
  })
  .strict();

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

export interface RunRoutesDeps {
  auth: AuthConfig;
  services: ApiServices;
  runs: Runs;
  threads: Threads;
  states: StateViews;
  json: RequestHandler;
  /** Deletes a thread as `DELETE /threads/{id}` does (a stateless run's, after it). */
  deleteThread(threadId: string, req: Request, caller: Caller): Promise<void>;
}

export function mountRunRoutes(app: Express, deps: RunRoutesDeps): void {
  const { runs, threads, states, services } = deps;
  const handle =
    (fn: (req: Request, res: Response, caller: Caller) => Promise<void>): RequestHandler =>
    async (req, res) => {
      try {
        await fn(req, res, callerOf(req, deps.auth));
      } catch (error) {
        answerError(req, res, error);
      }
    };
  const params = (req: Request) => parsePart(Params, req.params, 'path');
  const location = (run: Run) => `/threads/${run.sessionId}/runs/${run.id}`;

  const values = async (session: Session, run: Run, signal?: AbortSignal) => {
    const failure = await runs.settle(run, signal);
    const state = await states.values(session, run.kwargs !== null);
    return failure ? { ...state, __error__: failure } : state;
  };

  /** Streams `run` to `res` until its terminal event, then the thread's values. */
  const stream = async (
    req: Request,
    res: Response,
    target: { run: Run; session: Session; caller: Caller },
    o: {
      modes: Set<string>;
      resumable: boolean;
      cancelOnDisconnect: boolean;
      /** Parts after this event id only (a rejoin, or a resumed run after its interrupt). */
      lastEventId?: string;
      /** The opening `metadata` part: sent to a new stream, not to a rejoin. */
      metadata: boolean;
      /** Done before the response ends (a stateless run's thread is deleted by then). */
      beforeEnd?: () => Promise<void>;
    },
  ) => {
    const { run, session, caller } = target;
    openStream(res, {
      'Content-Location': location(run),
      // The SDK reconnects (with Last-Event-ID) only to a stream that told it where.
      ...(o.resumable ? { Location: `${location(run)}/stream` } : {}),
    });
    const gone = new AbortController();
    res.once('close', () => {
      if (!res.writableFinished) gone.abort();
    });
    const heartbeat = setInterval(() => {
      if (!res.destroyed) res.write(': ping\n\n');
    }, HEARTBEAT_MS);
    let ended = false;
    try {
      if (o.metadata) {
        await writePart(res, { event: 'metadata', data: { run_id: run.id, attempt: 1 } });
      }
      // Partial messages fold in every event from the run's first: a rejoin then reads from
      // there and sends only what follows its Last-Event-ID (messages-mode.ts).
      const partial = o.modes.has('messages') ? new PartialMessages() : undefined;
      const after = o.lastEventId;
      const replay = partial !== undefined && after !== undefined;
      const events = await runs.events(run, {
        signal: gone.signal,
        ...(after !== undefined && !replay ? { lastEventId: after } : {}),
      });
      for await (const envelope of events) {
        if (gone.signal.aborted) break;
        // A pause for a decision ends the stream too (the values then show where it stopped).
        if (isTerminalEvent(envelope.event) || envelope.event.type === 'interrupt') ended = true;
        const parts = [...partsOf(envelope, o.modes), ...(partial?.partsOf(envelope) ?? [])];
        if (replay && envelope.id <= after) continue;
        for (const part of parts) await writePart(res, part);
      }
      // A graph run streamed its own values; an agent run's follow at its end (and its
      // messages, complete).
      if (
        ended &&
        run.kwargs === null &&
        !gone.signal.aborted &&
        (o.modes.has('values') || partial)
      ) {
        const values = await states.values(session);
        if (o.modes.has('values')) await writePart(res, { event: 'values', data: values });
        for (const part of partial?.complete(values) ?? []) await writePart(res, part);
      }
    } catch (error) {
      requestLog(req).error({ err: error, runId: run.id }, 'LangGraph run stream failed');
    } finally {
      clearInterval(heartbeat);
    }
    if (!ended && gone.signal.aborted && o.cancelOnDisconnect) {
      await services.runs.abort(session.id, caller.scope).catch((error: unknown) => {
        requestLog(req).warn({ err: error, runId: run.id }, 'cancel on disconnect failed');
      });
    }
    await o.beforeEnd?.();
    if (!res.destroyed) res.end();
  };

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

  app.get(
    '/threads/:id/runs',
    handle(async (req, res, caller) => {
      const query = parsePart(RunListQuerySchema, req.query, 'query');
      const { runs: list, session } = await runs.list(params(req).id, query, caller.scope);
      const views = [];
      for (const run of list) views.push(runView(run, null, await runs.metadataOf(run, session)));
      res.status(200).json(views);
    }),
  );

  app.get(
    '/threads/:id/runs/:run',
    handle(async (req, res, caller) => {
      const { id, run: runId = '' } = params(req);
      const { run, session } = await runs.get(id, runId, caller.scope);
      res.status(200).json(runView(run, null, await runs.metadataOf(run, session)));
    }),
  );

  app.post(
    '/threads/:id/runs/:run/cancel',
    deps.json,
    handle(async (req, res, caller) => {
      const { id, run: runId = '' } = params(req);
      await runs.cancel(id, runId, parsePart(CancelQuerySchema, req.query, 'query'), caller.scope);
      res.status(202).end();
    }),
  );

  app.delete(
    '/threads/:id/runs/:run',
    handle(async (req, res, caller) => {
      const { id, run: runId = '' } = params(req);
      await runs.delete(id, runId, caller.scope);
      res.status(204).end();
    }),
  );

  app.get(
    '/threads/:id/runs/:run/join',
    handle(async (req, res, caller) => {
      const { id, run: runId = '' } = params(req);
      const { run, session } = await runs.get(id, runId, caller.scope);
      res.status(200).json(await values(session, run));
    }),
  );

  app.get(
    '/threads/:id/runs/:run/stream',
    handle(async (req, res, caller) => {
      const { id, run: runId = '' } = params(req);
      const query = parsePart(JoinStreamQuerySchema, req.query, 'query');
      const modes = parseModes(query.stream_mode);
      const { run, session } = await runs.get(id, runId, caller.scope);
      // `-1` is what the SDK's `useStream` sends to rejoin a run it has seen no event of: the
      // whole stream, as without the header.
      const header = req.header('last-event-id');
      const lastEventId = header === '-1' ? undefined : header;
      await stream(
        req,
        res,
        { run, session, caller },
        {
          // A join naming no mode gets what the run streams, as from the reference server: a
          // graph run's own modes (our `resumed` event is not among them unless `custom` is); an
          // agent run records no modes, so all of them.
          modes:
            query.stream_mode === undefined && run.kwargs ? new Set(run.kwargs.stream_mode) : modes,
          resumable: true,
          metadata: lastEventId === undefined,
          cancelOnDisconnect:
            query.cancel_on_disconnect === '1' || query.cancel_on_disconnect === 'true',
          ...(lastEventId ? { lastEventId } : {}),
        },
      );
    }),
  );
}

/**
 * `stream_mode` of a join stream: one mode, the parameter repeated (SDK 1.15 sends several that
 * way), or a JSON array (SDK 2.0).
 */
function parseModes(raw: string | string[] | undefined): Set<string> {
  if (raw === undefined) return new Set(ALL_MODES);
  if (Array.isArray(raw)) {
    return new Set(
      parsePart(
        z.object({ stream_mode: z.array(z.enum(STREAM_MODES)) }),
        { stream_mode: raw },
        'query',
      ).stream_mode,
    );
  }
  let modes: unknown = raw;
  if (raw.startsWith('[')) {
    try {
      modes = JSON.parse(raw);
    } catch {
      modes = null;
    }
  }
  const parsed = z.union([z.enum(STREAM_MODES), z.array(z.enum(STREAM_MODES))]).safeParse(modes);
  if (!parsed.success) {
    parsePart(z.object({ stream_mode: z.enum(STREAM_MODES) }), { stream_mode: raw }, 'query');
  }
  const list = parsed.data ?? [];
  return new Set(Array.isArray(list) ? list : [list]);
}
