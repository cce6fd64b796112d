import type { AgentEventEnvelope, Run } from '@cognition/contracts';
import { EventIdSchema } from '@cognition/contracts';
import type { Scope } from '@cognition/storage';
import { RuntimeError } from '../../errors';
import { eventId } from '../../ids';
import type { ActiveRuns } from '../coordination/active-runs';
import { END_WAIT_MS, openEventStream } from './event-stream';
import type { RunContext } from '../run-context';
import { requireSession } from '../run-context';
import { CANCELLED_PENDING_MESSAGE } from '../run-context';
import { repairTerminalEvent } from '../run-recovery';

/** Which events `RunManager.events` streams, and from where. */
export interface EventsOptions {
  /** Only this run's events, ending with its terminal event. Default: the session's current run. */
  runId?: string;
  /** Resume after this id (a client's `Last-Event-ID`); a `reconnected` event comes first. */
  lastEventId?: string;
  /** Ends the stream (e.g. the client disconnected). */
  signal?: AbortSignal;
}

/** @throws RuntimeError VALIDATION_ERROR naming `lastEventId` when it is not an event id. */
function checkLastEventId(lastEventId: string | undefined): void {
  if (lastEventId !== undefined && !EventIdSchema.safeParse(lastEventId).success) {
    throw RuntimeError.field('lastEventId', 'not an event id of this server');
  }
}

/** What opening a session's event stream needs from the run manager. */
export interface RunEventsDeps {
  ctx: RunContext;
  active: Pick<ActiveRuns, 'forSession' | 'has'>;
  /** Aborted at shutdown: every open stream ends. */
  closing: AbortSignal;
}

/**
 * The session's events (see `RunManager.events`): picks the followed run, repairs the end of a
 * run whose process died before its last events, and opens the stream after the cursor.
 */
export async function openRunEvents(
  d: RunEventsDeps,
  sessionId: string,
  scope: Scope,
  options: EventsOptions,
): Promise<AsyncGenerator<AgentEventEnvelope, void, undefined>> {
  const { storage } = d.ctx;
  checkLastEventId(options.lastEventId);
  await requireSession(storage, sessionId, scope);
  if (options.runId !== undefined) {
    const run = await storage.runs.get(options.runId);
    if (!run || run.sessionId !== sessionId) {
      throw new RuntimeError('RUN_NOT_FOUND', `Run not found: ${options.runId}`);
    }
    return openTargetEvents(d, sessionId, run, options);
  }
  const localId = d.active.forSession(sessionId)?.runId;
  const target =
    (localId !== undefined ? await storage.runs.get(localId) : null) ??
    (await storage.runs.getActive(sessionId)) ??
    (await storage.runs.list(sessionId))[0] ??
    null;
  return openTargetEvents(d, sessionId, target, options);
}

/**
 * The events of `run`, which the caller just sent or resumed (so its session is the caller's):
 * as `openRunEvents` with `runId`, without reading the session and the run again.
 */
export async function openEventsOfRun(
  d: RunEventsDeps,
  run: Run,
  options: Omit<EventsOptions, 'runId'>,
): Promise<AsyncGenerator<AgentEventEnvelope, void, undefined>> {
  checkLastEventId(options.lastEventId);
  return openTargetEvents(d, run.sessionId, run, { ...options, runId: run.id });
}

async function openTargetEvents(
  d: RunEventsDeps,
  sessionId: string,
  target: Run | null,
  options: EventsOptions,
): Promise<AsyncGenerator<AgentEventEnvelope, void, undefined>> {
  const { storage, log, logger } = d.ctx;
  if (target !== null && !d.active.has(target.id)) {
    // A process that died between storing the run's end (or pause) and its last event.
    await repairTerminalEvent(storage, log, logger, target);
  }
  const cursor = options.lastEventId ?? (target !== null ? `${target.id}:` : undefined);
  // Every run sent while another was active opens with `queued`, whenever it is read.
  const prelude =
    target !== null && target.multitaskStrategy !== null ? await queuedEvent(d, target) : undefined;
  return openEventStream({
    log,
    sessionId,
    targetRunId: target?.id ?? null,
    onlyRunId: options.runId ?? null,
    cursor,
    lastEventId: options.lastEventId,
    prelude: prelude && (cursor === undefined || prelude.id > cursor) ? prelude : undefined,
    isLocal: (runId) => d.active.has(runId),
    isActive: async (runId) => {
      const run = await storage.runs.get(runId);
      return (
        run !== null &&
        (run.status === 'pending' || run.status === 'queued' || run.status === 'running')
      );
    },
    repairEnd: async (runId) => {
      const run = await storage.runs.get(runId);
      if (run) await repairTerminalEvent(storage, log, logger, run);
    },
    unstartedEnd: (runId) => unstartedEnd(d, sessionId, runId),
    signals: options.signal ? [options.signal, d.closing] : [d.closing],
    pollMs: 2000,
    endWaitMs: END_WAIT_MS,
  });
}

/**
 * The first event of the stream of a run sent while another was active, id `<run>:0` (not in
 * the log: written while the run waits, its id would sort after events the session's active
 * run is still to emit): how many runs are ahead of it now (0 once it started).
 */
async function queuedEvent(d: RunEventsDeps, run: Run): Promise<AgentEventEnvelope> {
  const { storage } = d.ctx;
  let ahead = 0;
  if (run.status === 'pending') {
    const before = (await storage.runs.listPending(run.sessionId)).findIndex(
      (r) => r.id === run.id,
    );
    ahead = Math.max(before, 0) + ((await storage.runs.getActive(run.sessionId)) ? 1 : 0);
  }
  return {
    id: eventId(run.id, 0),
    sessionId: run.sessionId,
    runId: run.id,
    at: new Date().toISOString(),
    event: { type: 'queued', run_id: run.id, ahead },
  };
}

/** Where a thread's join stream starts (`RunManager.threadEvents`). */
export interface ThreadEventsOptions {
  /** After this event id (a client's `Last-Event-ID`); a `reconnected` event comes first. */
  lastEventId?: string;
  /** From the first event the log holds (no `lastEventId`): the thread's whole history. */
  fromStart?: boolean;
  signal?: AbortSignal;
}

/**
 * The session's events run after run until a signal aborts (a thread's join stream). Without
 * a cursor it starts at the run in progress (from its first event), else after the last run:
 * what happens from now on.
 */
export async function openThreadEvents(
  d: RunEventsDeps,
  sessionId: string,
  scope: Scope,
  options: ThreadEventsOptions,
): Promise<AsyncGenerator<AgentEventEnvelope, void, undefined>> {
  const { storage, log } = d.ctx;
  checkLastEventId(options.lastEventId);
  await requireSession(storage, sessionId, scope);
  let cursor = options.lastEventId;
  if (cursor === undefined && options.fromStart !== true) {
    const active = await storage.runs.getActive(sessionId);
    const latest = active ?? (await storage.runs.list(sessionId))[0];
    // `~` sorts after every sequence number: past the last event of a run that ended.
    if (latest) cursor = active || latest.status === 'pending' ? `${latest.id}:` : `${latest.id}:~`;
  }
  return openEventStream({
    log,
    sessionId,
    targetRunId: null,
    endless: true,
    onlyRunId: null,
    cursor,
    lastEventId: options.lastEventId,
    isLocal: (runId) => d.active.has(runId),
    isActive: () => Promise.resolve(false),
    repairEnd: () => Promise.resolve(),
    // No target run: a run cancelled before it started never opened a part of this stream.
    unstartedEnd: () => Promise.resolve(null),
    signals: options.signal ? [options.signal, d.closing] : [d.closing],
    // Only a safety net for events a cluster's fan-out dropped: live events wake it at once.
    pollMs: 5000,
    endWaitMs: END_WAIT_MS,
  });
}

/**
 * The terminal event of a run cancelled before it ever started (`RunManager.cancelPending`):
 * `aborted` (or removed since) without a start and without an event of its own in the log. Not
 * stored (see `EventStreamParams.unstartedEnd`); its id follows the `queued` event's.
 */
async function unstartedEnd(
  d: RunEventsDeps,
  sessionId: string,
  runId: string,
): Promise<AgentEventEnvelope | null> {
  const { storage, log } = d.ctx;
  const run = await storage.runs.get(runId);
  if (run && (run.status !== 'aborted' || run.startedAt !== null)) return null;
  const own = await log.readAfter(sessionId, `${runId}:`);
  if (own.events.some((e) => e.runId === runId)) return null;
  return {
    id: eventId(runId, 1),
    sessionId,
    runId,
    at: new Date().toISOString(),
    event: { type: 'error', code: 'ABORTED', message: CANCELLED_PENDING_MESSAGE },
  };
}
