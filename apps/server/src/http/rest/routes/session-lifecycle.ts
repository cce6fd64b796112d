import type { SessionActivity, ThreadCheckpoint } from '@cognition/contracts';
import type { z } from 'zod';
import { sessionToBody, pageOf } from '../convert';
import type { RestRoute } from '../route';
import { defineRoute } from '../route';
import {
  BODY_ERRORS,
  CALLER_ERRORS,
  INVALID,
  SESSION_NOT_FOUND,
  errorResponse,
} from '../responses';
import { SessionIdParams } from '../schemas/common';
import { SessionBody } from '../schemas/sessions';
import {
  ActivityListBody,
  FailSessionBody,
  ForkSessionBody,
  HistoryBody,
  MetadataKeyParams,
  MetadataValueBody,
  PageQuery,
  RebuildBody,
  RewindSessionBody,
  SessionActionBody,
} from '../schemas/session-lifecycle';

/*
 * The session lifecycle on REST: the actions of the session pipeline, the thread's history and
 * the activity log, each a thin adapter over one tRPC procedure.
 */

const STATE_CONFLICT = errorResponse(
  'VERSION_CONFLICT: expected_version is stale; CONFLICT: the session is in a status the action does not apply to',
);

function checkpointToBody(c: ThreadCheckpoint): z.infer<typeof HistoryBody>['checkpoints'][number] {
  return {
    checkpoint_id: c.checkpointId,
    parent_checkpoint_id: c.parentCheckpointId,
    step: c.step,
    created_at: c.createdAt.toISOString(),
    message_count: c.messageCount,
    last_message_preview: c.lastMessagePreview,
  };
}

function activityToBody(a: SessionActivity): z.infer<typeof ActivityListBody>['entries'][number] {
  return {
    id: a.id,
    session_id: a.sessionId,
    type: a.type,
    action: a.action,
    version_before: a.versionBefore,
    version_after: a.versionAfter,
    status_before: a.statusBefore,
    status_after: a.statusAfter,
    error_code: a.errorCode,
    detail: a.detail,
    created_at: a.createdAt.toISOString(),
  };
}

const versioned = (body: { expected_version?: number | undefined }) =>
  body.expected_version !== undefined ? { expectedVersion: body.expected_version } : {};

type SimpleAction = 'suspend' | 'resume' | 'complete' | 'clear';

function simpleAction(action: SimpleAction, summary: string, description: string): RestRoute {
  return defineRoute({
    method: 'post',
    path: `/sessions/{id}/${action}`,
    operationId: `${action}Session`,
    summary,
    description,
    tag: 'sessions',
    caller: 'required',
    request: { params: SessionIdParams, body: SessionActionBody },
    responses: {
      200: { description: 'The session after the action', schema: SessionBody },
      ...CALLER_ERRORS,
      ...BODY_ERRORS,
      404: SESSION_NOT_FOUND,
      409:
        action === 'clear'
          ? errorResponse('Stale version, wrong status, or a run in progress (RUN_IN_PROGRESS)')
          : STATE_CONFLICT,
      422: INVALID,
    },
    async handle({ api, params, body }) {
      const session = await api.sessions[action]({ id: params.id, ...versioned(body) });
      return { status: 200, body: sessionToBody(session) };
    },
  });
}

export const SESSION_LIFECYCLE_ROUTES: RestRoute[] = [
  simpleAction(
    'suspend',
    'Suspend a session',
    'Status `suspended` (from `active` or `error`): messages to it answer 409 until it is resumed. ' +
      'The status is stored first, then a running run is aborted (what it produced so far is kept); ' +
      'messages queued with `enqueue` wait until the session is resumed.',
  ),
  simpleAction('resume', 'Resume a session', 'Back to `active` (from `suspended` or `error`).'),
  simpleAction(
    'complete',
    'Complete a session',
    'Terminal status `completed` (`ended_at` is set): reads keep working, messages answer 409.',
  ),
  simpleAction(
    'clear',
    'Clear the agent state',
    'The next turn starts from an empty conversation: a new head checkpoint keeps every message ' +
      '(the history stays readable) with a mark the model’s view starts after. Identity, agent and ' +
      'metadata are kept. 409 while a run is active.',
  ),
  defineRoute({
    method: 'post',
    path: '/sessions/{id}/fail',
    operationId: 'failSession',
    summary: 'Fail a session',
    description:
      'Terminal status `failed` (`ended_at` is set), with an optional reason kept in the activity log.',
    tag: 'sessions',
    caller: 'required',
    request: { params: SessionIdParams, body: FailSessionBody },
    responses: {
      200: { description: 'The failed session', schema: SessionBody },
      ...CALLER_ERRORS,
      ...BODY_ERRORS,
      404: SESSION_NOT_FOUND,
      409: STATE_CONFLICT,
      422: INVALID,
    },
    async handle({ api, params, body }) {
      const session = await api.sessions.fail({
        id: params.id,
        ...versioned(body),
        ...(body.reason !== undefined ? { reason: body.reason } : {}),
      });
      return { status: 200, body: sessionToBody(session) };
    },
  }),
  defineRoute({
    method: 'post',
    path: '/sessions/{id}/fork',
    operationId: 'forkSession',
    summary: 'Fork a session',
    description:
      'A new session (`parent_id` = the source; same agent, config, metadata, system prompt, task ' +
      'and scopes) whose thread is the source’s state at `checkpoint_id` or right after ' +
      '`message_id` (the latest state when neither is given), with message rows copied under new ' +
      'ids. The source is unchanged.',
    tag: 'sessions',
    caller: 'required',
    request: {
      params: SessionIdParams,
      body: ForkSessionBody,
      examples: { latest: {}, fromMessage: { title: 'Alternative', message_id: 'msg_…' } },
    },
    responses: {
      201: { description: 'The new session', schema: SessionBody },
      ...CALLER_ERRORS,
      ...BODY_ERRORS,
      404: errorResponse(
        'Session, checkpoint (SESSION_NOT_FOUND) or message (MESSAGE_NOT_FOUND) not found',
      ),
      409: errorResponse('No kept checkpoint holds the message (pruned by retention)'),
      422: INVALID,
    },
    async handle({ api, params, body }) {
      const session = await api.sessions.fork({
        id: params.id,
        ...(body.title !== undefined ? { title: body.title } : {}),
        ...(body.checkpoint_id !== undefined ? { checkpointId: body.checkpoint_id } : {}),
        ...(body.message_id !== undefined ? { messageId: body.message_id } : {}),
      });
      return { status: 201, body: sessionToBody(session) };
    },
  }),
  defineRoute({
    method: 'post',
    path: '/sessions/{id}/rewind',
    operationId: 'rewindSession',
    summary: 'Rewind a session',
    description:
      'The thread’s head moves back to `checkpoint_id`, or to the state right after `message_id`: ' +
      'a new checkpoint equal to that one (history is never destroyed). Messages after that ' +
      'point leave the message list, `message_count` follows, the version increments, and the ' +
      'next message continues from there. 409 while a run is active.',
    tag: 'sessions',
    caller: 'required',
    request: {
      params: SessionIdParams,
      body: RewindSessionBody,
      examples: { toMessage: { message_id: 'msg_…' } },
    },
    responses: {
      200: { description: 'The session after the rewind', schema: SessionBody },
      ...CALLER_ERRORS,
      ...BODY_ERRORS,
      404: errorResponse(
        'Session, checkpoint (SESSION_NOT_FOUND) or message (MESSAGE_NOT_FOUND) not found',
      ),
      409: errorResponse(
        'A run is in progress (RUN_IN_PROGRESS), a stale version, a terminal status, or the point was pruned by retention',
      ),
      422: INVALID,
    },
    async handle({ api, params, body }) {
      const session = await api.sessions.rewind({
        id: params.id,
        ...versioned(body),
        ...(body.checkpoint_id !== undefined ? { checkpointId: body.checkpoint_id } : {}),
        ...(body.message_id !== undefined ? { messageId: body.message_id } : {}),
      });
      return { status: 200, body: sessionToBody(session) };
    },
  }),
  defineRoute({
    method: 'put',
    path: '/sessions/{id}/metadata/{key}',
    operationId: 'setSessionMetadata',
    summary: 'Set one metadata key',
    description: 'Sets one key; the others are kept.',
    tag: 'sessions',
    caller: 'required',
    request: {
      params: MetadataKeyParams,
      body: MetadataValueBody,
      examples: { value: { value: 'myorg/myrepo' } },
    },
    responses: {
      200: { description: 'The session', schema: SessionBody },
      ...CALLER_ERRORS,
      ...BODY_ERRORS,
      404: SESSION_NOT_FOUND,
      409: STATE_CONFLICT,
      422: INVALID,
    },
    async handle({ api, params, body }) {
      const session = await api.sessions.setMetadata({
        id: params.id,
        key: params.key,
        value: body.value,
        ...versioned(body),
      });
      return { status: 200, body: sessionToBody(session) };
    },
  }),
  defineRoute({
    method: 'delete',
    path: '/sessions/{id}/metadata/{key}',
    operationId: 'deleteSessionMetadata',
    summary: 'Remove one metadata key',
    description: 'Removes one key; the others are kept. 404 when the session has no such key.',
    tag: 'sessions',
    caller: 'required',
    request: { params: MetadataKeyParams },
    responses: {
      200: { description: 'The session', schema: SessionBody },
      ...CALLER_ERRORS,
      404: errorResponse('Session not found, or no such key (SESSION_NOT_FOUND)'),
      422: INVALID,
    },
    async handle({ api, params }) {
      const session = await api.sessions.deleteMetadata({ id: params.id, key: params.key });
      return { status: 200, body: sessionToBody(session) };
    },
  }),
  defineRoute({
    method: 'get',
    path: '/sessions/{id}/history',
    operationId: 'getSessionHistory',
    summary: 'The thread’s checkpoints',
    description:
      'Newest first, paginated: what `fork` and `rewind` can go back to (only what checkpoint ' +
      'retention kept).',
    tag: 'sessions',
    caller: 'required',
    request: { params: SessionIdParams, query: PageQuery },
    responses: {
      200: { description: 'One page of checkpoints', schema: HistoryBody },
      ...CALLER_ERRORS,
      404: SESSION_NOT_FOUND,
      422: INVALID,
    },
    async handle({ api, params, query }) {
      const page = await api.sessions.history({
        id: params.id,
        ...pageOf(query),
      });
      return {
        status: 200,
        body: { checkpoints: page.checkpoints.map(checkpointToBody), has_more: page.hasMore },
      };
    },
  }),
  defineRoute({
    method: 'get',
    path: '/sessions/{id}/activity',
    operationId: 'getSessionActivity',
    summary: 'The session’s activity log',
    description:
      'The `session.*` events of every action on the session (loaded, action_executed with the ' +
      'version and status before/after, saved, save_failed with the error code), newest first.',
    tag: 'sessions',
    caller: 'required',
    request: { params: SessionIdParams, query: PageQuery },
    responses: {
      200: { description: 'One page of entries', schema: ActivityListBody },
      ...CALLER_ERRORS,
      404: SESSION_NOT_FOUND,
      422: INVALID,
    },
    async handle({ api, params, query }) {
      const page = await api.sessions.activity({
        id: params.id,
        ...pageOf(query),
      });
      return {
        status: 200,
        body: {
          entries: page.entries.map(activityToBody),
          total: page.total,
          has_more: page.hasMore,
        },
      };
    },
  }),
  defineRoute({
    method: 'post',
    path: '/sessions/{id}/messages/rebuild',
    operationId: 'rebuildMessages',
    summary: 'Rebuild the message list from the checkpoint',
    description:
      'Operator action: rewrites the message rows from the thread’s latest checkpoint (the ' +
      'authoritative record), keeping accepted user messages not yet checkpointed.',
    tag: 'messages',
    caller: 'required',
    request: { params: SessionIdParams },
    responses: {
      200: { description: 'The row count after the rebuild', schema: RebuildBody },
      ...CALLER_ERRORS,
      404: SESSION_NOT_FOUND,
      422: INVALID,
    },
    async handle({ api, params }) {
      return { status: 200, body: await api.messages.rebuild({ sessionId: params.id }) };
    },
  }),
];
