import type { ApiServices, AuthConfig, Caller } from '@cognition/api';
import type { Run, Session } from '@cognition/contracts';
import { isTerminalEvent } from '@cognition/contracts';
import type { Request, RequestHandler, Response } from 'express';
import { z } from 'zod';
import { requestLog } from '../request-log';
import { PartialMessages } from './messages-mode';
import { openStream, partsOf, writePart } from './run-stream';
import type { Runs } from './runs';
import type { StateViews } from './state-views';
import type { Threads } from './threads';
import { answerError, callerOf, parsePart } from './wire';

/**
 * What the run routes of the LangGraph API share (run-create-routes.ts creates and streams
 * runs, run-read-routes.ts reads, joins, cancels and deletes them): the handler answering
 * errors, a run's path and location, a run's answer (the thread's values once it ended) and
 * streaming a run as SSE. See docs/langgraph-api.md for what each route answers.
 */

const HEARTBEAT_MS = 15_000;

const Params = z.object({ id: z.string(), run: z.string().optional() });

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

export type RunRouteKit = ReturnType<typeof runRouteKit>;

export function runRouteKit(deps: RunRoutesDeps) {
  const { runs, states, services } = deps;
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
  return { handle, params, location, values, stream };
}
