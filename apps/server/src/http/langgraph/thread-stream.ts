import type { ApiServices, AuthConfig } from '@cognition/api';
import type { AgentEventEnvelope, Run, Session } from '@cognition/contracts';
import { EventIdSchema, isTerminalEvent } from '@cognition/contracts';
import type { Express, Request, Response } from 'express';
import { z } from 'zod';
import { requestLog } from '../request-log';
import { PartialMessages } from './messages-mode';
import type { StreamPart } from './run-stream';
import { openStream, partsOf, writePart } from './run-stream';
import type { StateViews } from './state-views';
import type { Threads } from './threads';
import { LangGraphHttpError, answerError, callerOf, parsePart } from './wire';

/**
 * `GET /threads/{id}/stream`, the thread's join stream (`client.threads.joinStream`;
 * docs/langgraph-api.md, "Thread join stream"): the parts of every run of the thread, one run
 * after another, as they happen, until the client goes. Made from the session's durable events,
 * so a `Last-Event-ID` resumes on any node.
 */

/** LangGraph's thread stream modes (the SDK's `ThreadStreamMode`). */
const THREAD_MODES = ['run_modes', 'lifecycle', 'state_update'] as const;
type ThreadMode = (typeof THREAD_MODES)[number];

/** What a run whose kwargs name no modes (an agent's) streams: as its own join stream does. */
const AGENT_MODES = ['values', 'updates', 'messages-tuple', 'custom'];
const HEARTBEAT_MS = 15_000;
/** How often an open thread stream looks whether the server began shutting down. */
const DRAIN_CHECK_MS = 250;

// One mode, the parameter repeated (SDK 1.15) or a JSON array (SDK 2.0); `stream_modes` is the
// name LangGraph's API reference gives it.
const ModeList = z.preprocess(
  (value) => {
    if (typeof value !== 'string') return value;
    if (!value.startsWith('[')) return [value];
    try {
      return JSON.parse(value) as unknown;
    } catch {
      return value;
    }
  },
  z.array(z.enum(THREAD_MODES)).min(1),
);

const QuerySchema = z
  .object({ stream_mode: ModeList.optional(), stream_modes: ModeList.optional() })
  .strict();

const Params = z.object({ id: z.string() });

export interface ThreadStreamDeps {
  auth: AuthConfig;
  services: ApiServices;
  threads: Threads;
  states: StateViews;
  /** Whether the server is draining. */
  shuttingDown(): boolean;
}

export function mountThreadStream(app: Express, deps: ThreadStreamDeps): void {
  app.get('/threads/:id/stream', async (req: Request, res: Response) => {
    const gone = new AbortController();
    let heartbeat: NodeJS.Timeout | undefined;
    let draining: NodeJS.Timeout | undefined;
    try {
      const caller = callerOf(req, deps.auth);
      const { id } = parsePart(Params, req.params, 'path');
      const query = parsePart(QuerySchema, req.query, 'query');
      const modes = new Set<ThreadMode>(query.stream_mode ?? query.stream_modes ?? ['run_modes']);
      const session = await deps.threads.session(id, caller.scope);
      const cursor = lastEventId(req);
      const events = await deps.services.runs.threadEvents(session.id, caller.scope, {
        ...(cursor === 'start' ? { fromStart: true } : {}),
        ...(cursor !== undefined && cursor !== 'start' ? { lastEventId: cursor } : {}),
        signal: gone.signal,
      });
      // `Location`: the SDK resumes a stream cut off (a node gone) there, with Last-Event-ID.
      openStream(res, { Location: `/threads/${session.id}/stream` });
      res.once('close', () => gone.abort());
      heartbeat = setInterval(() => {
        if (!res.destroyed) res.write(': ping\n\n');
      }, HEARTBEAT_MS);
      // A thread's stream never ends by itself: when the server drains, it is cut (not ended,
      // which the SDK would take for the end) so the client resumes on another node or the next
      // process with its Last-Event-ID, and the drain does not wait on it.
      draining = setInterval(() => {
        if (deps.shuttingDown()) res.destroy();
      }, DRAIN_CHECK_MS);
      const thread = new ThreadParts(deps, session, modes);
      for await (const envelope of events) {
        for (const part of await thread.partsOf(envelope)) await writePart(res, part);
      }
    } catch (error) {
      if (!res.headersSent) {
        answerError(req, res, error);
        return;
      }
      requestLog(req).error({ err: error }, 'LangGraph thread stream failed');
    } finally {
      clearInterval(heartbeat);
      clearInterval(draining);
      gone.abort();
    }
    if (!res.destroyed) res.end();
  });
}

/**
 * `Last-Event-ID`: `-` (LangGraph's "from the beginning") or `-1` (what `useStream` sends for
 * "nothing seen yet"): every event the thread's log holds; otherwise one of our event ids.
 */
function lastEventId(req: Request): string | undefined {
  const header = req.header('last-event-id');
  if (header === undefined || header === '') return undefined;
  if (header === '-' || header === '-1') return 'start';
  if (!EventIdSchema.safeParse(header).success) {
    const message = 'not an event id of this server (or "-" for the beginning)';
    throw new LangGraphHttpError(422, `Invalid header: header.last-event-id: ${message}`, [
      { path: 'header.last-event-id', message },
    ]);
  }
  return header;
}

/** What the stream knows of a run it is sending. */
interface Followed {
  run: Run | null;
  modes: Set<string>;
  partial: PartialMessages | undefined;
}

/**
 * The parts of the thread's events under the thread modes: `run_modes` each run's own parts
 * (the modes it was made with, as its join stream sends them), opened by a `metadata` part and
 * closed by `run_done`; `lifecycle` only those two; `state_update` the thread's states (`values`).
 */
class ThreadParts {
  private readonly followed = new Map<string, Followed>();

  constructor(
    private readonly deps: ThreadStreamDeps,
    private readonly session: Session,
    private readonly modes: ReadonlySet<ThreadMode>,
  ) {}

  async partsOf(envelope: AgentEventEnvelope): Promise<StreamPart[]> {
    const { event, runId, id } = envelope;
    if (event.type === 'reconnected') return [];
    const lifecycle = this.modes.has('run_modes') || this.modes.has('lifecycle');
    const parts: StreamPart[] = [];
    let run = this.followed.get(runId);
    if (!run) {
      run = await this.follow(runId);
      if (lifecycle) parts.push({ event: 'metadata', data: { run_id: runId, attempt: 1 } });
    }
    const wanted = new Set<string>(this.modes.has('run_modes') ? run.modes : []);
    if (this.modes.has('state_update')) wanted.add('values');
    parts.push(...partsOf(envelope, wanted));
    if (this.modes.has('run_modes')) parts.push(...(run.partial?.partsOf(envelope) ?? []));
    if (!isTerminalEvent(event)) return parts;
    this.followed.delete(runId);
    // An agent run's values (and its messages, complete) follow its end, as on its own stream.
    if (run.run?.kwargs === null && (wanted.has('values') || run.partial)) {
      const values = await this.deps.states.values(this.session);
      if (wanted.has('values')) parts.push({ id, event: 'values', data: values });
      if (this.modes.has('run_modes')) parts.push(...(run.partial?.complete(values, id) ?? []));
    }
    if (lifecycle) {
      const status =
        event.type !== 'error' ? 'success' : event.code === 'ABORTED' ? 'interrupted' : 'error';
      parts.push({ id, event: 'run_done', data: { run_id: runId, status } });
    }
    return parts;
  }

  private async follow(runId: string): Promise<Followed> {
    const run = await this.deps.services.storage.runs.get(runId);
    const modes = new Set(run?.kwargs ? run.kwargs.stream_mode : AGENT_MODES);
    const followed = {
      run,
      modes,
      partial: modes.has('messages') ? new PartialMessages() : undefined,
    };
    this.followed.set(runId, followed);
    return followed;
  }
}
