import type { Express } from 'express';
import { z } from 'zod';
import type { RunRoutesDeps } from './run-route-kit';
import { runRouteKit } from './run-route-kit';
import { STREAM_MODES } from './run-stream';
import { CancelQuerySchema, RunListQuerySchema, runView } from './run-wire';
import { parsePart } from './wire';

/**
 * The LangGraph API's routes reading a thread's runs: list, get, cancel, delete, join and join
 * stream (`/threads/{id}/runs…`). Creating them is run-create-routes.ts's. See
 * docs/langgraph-api.md for what each answers.
 */

/** What a background run's join stream sends when the request names no mode. */
const ALL_MODES = ['values', 'updates', 'messages-tuple', 'custom'];

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

export function mountRunReadRoutes(app: Express, deps: RunRoutesDeps): void {
  const { runs } = deps;
  const { handle, params, values, stream } = runRouteKit(deps);

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
