import { ApiError, mapAsyncIterator } from '@cognition/api';
import type { AgentEventEnvelope } from '@cognition/contracts';
import { EventIdSchema, isActiveRunStatus } from '@cognition/contracts';
import { runIdOfEventId } from '@cognition/runtime';
import { isTrackedEnvelope } from '@trpc/server';
import type { IncomingHttpHeaders } from 'node:http';
import { z } from 'zod';
import { runDetailToBody, runToBody, sendMessageInput } from '../convert';
import type { ApiCaller, ResponseSpec, RestRoute, StreamResult } from '../route';
import { CALLER_ERRORS, errorResponse, INVALID } from '../responses';
import { defineRoute } from '../route';
import { SessionIdParams } from '../schemas/common';
import { AgentEventFrame } from '../schemas/events';
import { SendMessageBody } from '../schemas/messages';
import {
  AbortBody,
  RunDetailBody,
  ResumeRunBody,
  RunIdParams,
  RunListBody,
  RunListQuery,
  StreamQuery,
} from '../schemas/runs';

const STREAM: ResponseSpec = {
  description:
    "The run's events as Server-Sent Events, ending after its terminal `done` or `error` " +
    'event, or after an `interrupt` when the run pauses for a decision. The schema is that of ' +
    'one frame (`AgentEvent`, discriminated by `event`)',
  schema: AgentEventFrame,
  contentType: 'text/event-stream',
};

/** Headers of the SSE routes (documented; read by `resumeCursor`). */
const StreamHeaders = z.object({
  'Last-Event-ID': EventIdSchema.optional().meta({
    description:
      'Resume after this event id: re-attaches to the run the id belongs to, sends a ' +
      '`reconnected` event, then exactly the missed events, then live ones. Never starts a run.',
  }),
});

export const RUN_ID_HEADER = 'X-Cognition-Run-Id';
export const MESSAGE_ID_HEADER = 'X-Cognition-Message-Id';

/** The resume cursor: the `Last-Event-ID` header, else `?last_event_id=`. */
function resumeCursor(
  headers: IncomingHttpHeaders,
  query: { last_event_id?: string | undefined },
): string | undefined {
  const header = headers['last-event-id'];
  const value = typeof header === 'string' ? header.trim() : '';
  if (value === '') return query.last_event_id;
  if (!EventIdSchema.safeParse(value).success) {
    throw new ApiError('VALIDATION_ERROR', 'Invalid Last-Event-ID header: not an event id', {
      issues: [{ path: 'headers.last-event-id', message: 'event ids look like <runId>:<seq>' }],
    });
  }
  return value;
}

/**
 * The envelopes of a `runs.events` subscription called in-process. The resolver yields
 * `tracked(id, envelope)` tuples (the caller's static type describes the unwrapped HTTP shape
 * instead), so each item is unwrapped here.
 */
function untrack(
  source: AsyncIterable<unknown, void, undefined>,
): AsyncGenerator<AgentEventEnvelope, void, undefined> {
  // Returning early (client gone) returns `source`, which releases the runtime subscription.
  return mapAsyncIterator(
    source,
    (item) => (isTrackedEnvelope(item) ? item[1] : item) as AgentEventEnvelope,
  );
}

/** Subscribes to one run's events (replayed from its start, or after `lastEventId`). */
async function runStream(
  api: ApiCaller,
  sessionId: string,
  runId: string,
  lastEventId?: string,
): Promise<StreamResult> {
  const source = await api.runs.events({
    sessionId,
    runId,
    ...(lastEventId !== undefined ? { lastEventId } : {}),
  });
  return { status: 200, events: untrack(source), headers: { [RUN_ID_HEADER]: runId } };
}

/**
 * Re-attaches to the run `lastEventId` belongs to. Deliberately never sends anything: the
 * original Cognition re-sent the message on a reconnecting POST, starting a second run.
 */
function resume(api: ApiCaller, sessionId: string, lastEventId: string): Promise<StreamResult> {
  // EventIdSchema guarantees `<runId>:<seq>`.
  const runId = runIdOfEventId(lastEventId) ?? lastEventId;
  return runStream(api, sessionId, runId, lastEventId);
}

/** Runs of a session: send (streamed), reconnect, follow, abort, list, inspect. */
export const RUN_ROUTES: RestRoute[] = [
  defineRoute({
    method: 'post',
    path: '/sessions/{id}/messages',
    operationId: 'sendMessage',
    summary: 'Send a message and stream the run it starts',
    description:
      'Stores the user message, starts a run answering it and streams the run as Server-Sent ' +
      'Events until its terminal event. A request carrying `Last-Event-ID` (or ' +
      "`?last_event_id=`) is a reconnect: it re-attaches to that id's run and sends nothing. " +
      'Errors before the stream starts are JSON: 404 unknown session, 409 a run is in progress ' +
      '(or the session accepts no messages), 422 invalid input. While a run is active, ' +
      '`multitask_strategy` decides (reject, enqueue, interrupt, rollback): a run that waits ' +
      'streams `queued` first and its own events once it starts. Disconnecting does not abort ' +
      'the run (POST /sessions/{id}/abort does).',
    tag: 'messages',
    caller: 'required',
    request: {
      params: SessionIdParams,
      query: StreamQuery,
      headers: StreamHeaders,
      body: SendMessageBody,
      examples: {
        minimal: { content: 'List the files in this directory.' },
        withCallback: {
          content: 'Review this PR and summarize the key risks.',
          callback_url: 'https://example.com/cognition-callback',
          idempotency_key: 'pr-42-review',
          metadata: { source: 'ci' },
        },
        doubleTexting: { content: 'Also check the tests.', multitask_strategy: 'enqueue' },
      },
    },
    responses: {
      200: STREAM,
      ...CALLER_ERRORS,
      400: errorResponse('Malformed JSON body'),
      404: errorResponse(
        "Session not found (or outside the caller's scope), or the resumed run is not",
      ),
      409: errorResponse('A run is in progress on the session, or the session accepts no messages'),
      413: errorResponse('Body larger than COGNITION_MAX_BODY_BYTES'),
      422: INVALID,
      503: errorResponse('The server is shutting down'),
    },
    async handle({ api, params, query, body, headers, shuttingDown }) {
      const cursor = resumeCursor(headers, query);
      if (cursor !== undefined) return resume(api, params.id, cursor);
      if (shuttingDown) {
        throw new ApiError('UNAVAILABLE', 'The server is shutting down: retry on another node');
      }
      // One call: the events are opened for the run the send returned, no lookups again.
      const { run, message, events } = await api.messages.stream(sendMessageInput(params.id, body));
      return {
        status: 200,
        events,
        headers: { [RUN_ID_HEADER]: run.id, [MESSAGE_ID_HEADER]: message.id },
      };
    },
  }),
  defineRoute({
    method: 'get',
    path: '/sessions/{id}/events',
    operationId: 'streamEvents',
    summary: "Follow or resume a session's run",
    description:
      "With `Last-Event-ID` (or `?last_event_id=`): resumes that id's run exactly like a " +
      "reconnecting POST. Without: streams the session's active run from its first event; " +
      '204 when no run is active.',
    tag: 'messages',
    caller: 'required',
    request: { params: SessionIdParams, query: StreamQuery, headers: StreamHeaders },
    responses: {
      200: STREAM,
      204: { description: 'No run is active (and no Last-Event-ID was given)' },
      ...CALLER_ERRORS,
      404: errorResponse(
        "Session not found (or outside the caller's scope), or the resumed run is not",
      ),
      422: INVALID,
    },
    async handle({ api, params, query, headers }) {
      const cursor = resumeCursor(headers, query);
      if (cursor !== undefined) return resume(api, params.id, cursor);
      const { runs } = await api.runs.list({ sessionId: params.id });
      const active = runs.find((run) => isActiveRunStatus(run.status));
      if (!active) return { status: 204 };
      return runStream(api, params.id, active.id);
    },
  }),
  defineRoute({
    method: 'post',
    path: '/sessions/{id}/abort',
    operationId: 'abortRun',
    summary: "Abort the session's active run",
    description:
      'Cancels the model request and any running tool; what was produced so far is kept (the ' +
      'partial assistant message is stored) and the run ends `aborted`, its stream with ' +
      '`error {code: "ABORTED"}`. `aborted: false, run: null` when nothing was running.',
    tag: 'runs',
    caller: 'required',
    request: { params: SessionIdParams },
    responses: {
      200: { description: 'What the abort did', schema: AbortBody },
      ...CALLER_ERRORS,
      404: errorResponse("Session not found (or outside the caller's scope)"),
      422: INVALID,
    },
    async handle({ api, params }) {
      const result = await api.runs.abort({ sessionId: params.id });
      return {
        status: 200,
        body: { aborted: result.aborted, run: result.run ? runToBody(result.run) : null },
      };
    },
  }),
  defineRoute({
    method: 'get',
    path: '/sessions/{id}/runs',
    operationId: 'listRuns',
    summary: 'List the runs of a session',
    description: 'Newest first.',
    tag: 'runs',
    caller: 'required',
    request: { params: SessionIdParams, query: RunListQuery },
    responses: {
      200: { description: "The session's runs", schema: RunListBody },
      ...CALLER_ERRORS,
      404: errorResponse("Session not found (or outside the caller's scope)"),
      422: INVALID,
    },
    async handle({ api, params, query }) {
      const { runs } = await api.runs.list({
        sessionId: params.id,
        ...(query.status !== undefined ? { status: query.status } : {}),
      });
      return { status: 200, body: { runs: runs.map(runToBody) } };
    },
  }),
  defineRoute({
    method: 'post',
    path: '/sessions/{id}/runs/{run_id}/resume',
    operationId: 'resumeRun',
    summary: 'Resume a run paused for a decision, and stream it',
    description:
      'A run whose agent lists a tool in `interrupt_on` pauses before running a call to it: ' +
      'status `requires_action`, its stream ending with an `interrupt` event. This gives one ' +
      'decision per pending tool call — `approve`, `edit` (with `args`, checked against the ' +
      "tool's schema) or `reject` (with an optional `message`, which the model gets as the " +
      "tool's result) — and streams the run from there, on the same run id, as Server-Sent " +
      'Events (ids continue after the `interrupt`). 409 when the run is not waiting (never ' +
      'paused, or resumed or aborted meanwhile: of two resumes at once exactly one wins); 422 ' +
      'naming the decision at fault. A reconnect uses GET /sessions/{id}/events with ' +
      '`Last-Event-ID`.',
    tag: 'runs',
    caller: 'required',
    request: {
      params: RunIdParams,
      body: ResumeRunBody,
      examples: {
        approve: { decisions: [{ tool_call_id: 'call_1', type: 'approve' }] },
        edit: {
          decisions: [{ tool_call_id: 'call_1', type: 'edit', args: { command: 'ls -la build' } }],
        },
        reject: {
          decisions: [
            { tool_call_id: 'call_1', type: 'reject', message: 'Do not delete anything.' },
          ],
        },
      },
    },
    responses: {
      200: STREAM,
      ...CALLER_ERRORS,
      400: errorResponse('Malformed JSON body'),
      404: errorResponse("Session or run not found (or outside the caller's scope)"),
      409: errorResponse('The run is not waiting for a decision'),
      422: INVALID,
      503: errorResponse('The server is shutting down'),
    },
    async handle({ api, params, body, shuttingDown }) {
      if (shuttingDown) {
        throw new ApiError('UNAVAILABLE', 'The server is shutting down: retry on another node');
      }
      const resumed = await api.runs.resume({
        sessionId: params.id,
        runId: params.run_id,
        decisions: body.decisions,
      });
      return runStream(api, params.id, params.run_id, resumed.lastEventId ?? undefined);
    },
  }),
  defineRoute({
    method: 'get',
    path: '/sessions/{id}/runs/{run_id}',
    operationId: 'getRun',
    summary: 'Get one run with its completion-callback attempts',
    tag: 'runs',
    caller: 'required',
    request: { params: RunIdParams },
    responses: {
      200: { description: 'The run', schema: RunDetailBody },
      ...CALLER_ERRORS,
      404: errorResponse('Session or run not found (a run of another session is not found)'),
      422: INVALID,
    },
    async handle({ api, params }) {
      const run = await api.runs.get({ sessionId: params.id, runId: params.run_id });
      return { status: 200, body: runDetailToBody(run) };
    },
  }),
];
