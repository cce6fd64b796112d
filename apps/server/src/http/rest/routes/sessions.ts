import { ApiError } from '@cognition/api';
import { createSessionInput, pageOf, sessionToBody, updateSessionInput } from '../convert';
import type { RestRoute } from '../route';
import { defineRoute } from '../route';
import {
  BODY_ERRORS,
  CALLER_ERRORS,
  errorResponse,
  INVALID,
  SESSION_NOT_FOUND,
} from '../responses';
import { METADATA_QUERY_PREFIX, SessionIdParams } from '../schemas/common';
import {
  CreateSessionBody,
  ListSessionsQuery,
  SessionBody,
  SessionListBody,
  UpdateSessionBody,
} from '../schemas/sessions';

/** Sessions: create, list (with `metadata.<key>` filters), get, update, delete. */
export const SESSION_ROUTES: RestRoute[] = [
  defineRoute({
    method: 'post',
    path: '/sessions',
    operationId: 'createSession',
    summary: 'Create a session',
    description: "Creates an `active` session in the caller's scope.",
    tag: 'sessions',
    caller: 'required',
    request: {
      body: CreateSessionBody,
      examples: {
        minimal: { title: 'My session' },
        withAgent: { title: 'Code review', agent_name: 'readonly' },
        withMetadata: {
          title: 'PR review session',
          metadata: { workflow_id: 'pr-review', repository: 'myorg/myrepo', pr_number: '42' },
          config: { model: 'gpt-4o-mini', temperature: 0.2 },
        },
      },
    },
    responses: {
      201: { description: 'The created session', schema: SessionBody },
      ...CALLER_ERRORS,
      ...BODY_ERRORS,
      422: INVALID,
    },
    async handle({ api, body }) {
      const session = await api.sessions.create(createSessionInput(body));
      return { status: 201, body: sessionToBody(session) };
    },
  }),
  defineRoute({
    method: 'get',
    path: '/sessions',
    operationId: 'listSessions',
    summary: 'List sessions',
    description:
      "Sessions in the caller's scope, most recently updated first unless `sort`/`order` say " +
      'otherwise; filter by status, agent, text in the title, and metadata with ' +
      '`metadata.<key>=<value>` query parameters (all must match), e.g. ' +
      '`?metadata.repository=myorg/myrepo&metadata.pr_number=42`.',
    tag: 'sessions',
    caller: 'required',
    request: { query: ListSessionsQuery, extraQueryPrefix: METADATA_QUERY_PREFIX },
    responses: {
      200: { description: 'One page of sessions and the total', schema: SessionListBody },
      ...CALLER_ERRORS,
      422: INVALID,
    },
    async handle({ api, query, extraQuery }) {
      const predicates: [string, string][] = [];
      for (const [name, value] of Object.entries(extraQuery)) {
        // A repeated predicate cannot match one value; reject rather than guess.
        if (Array.isArray(value)) throw repeatedQuery(name);
        predicates.push([name.slice(METADATA_QUERY_PREFIX.length), value]);
      }
      const metadata = Object.fromEntries(predicates);
      const page = await api.sessions.list({
        ...(query.status !== undefined ? { status: query.status } : {}),
        ...(query.agent_name !== undefined ? { agentName: query.agent_name } : {}),
        ...(query.title_contains !== undefined ? { titleContains: query.title_contains } : {}),
        ...(query.sort !== undefined ? { sort: query.sort } : {}),
        ...(query.order !== undefined ? { order: query.order } : {}),
        ...pageOf(query),
        ...(Object.keys(metadata).length > 0 ? { metadata } : {}),
      });
      return {
        status: 200,
        body: { sessions: page.sessions.map(sessionToBody), total: page.total },
      };
    },
  }),
  defineRoute({
    method: 'get',
    path: '/sessions/{id}',
    operationId: 'getSession',
    summary: 'Get a session',
    tag: 'sessions',
    caller: 'required',
    request: { params: SessionIdParams },
    responses: {
      200: { description: 'The session', schema: SessionBody },
      ...CALLER_ERRORS,
      404: SESSION_NOT_FOUND,
      422: INVALID,
    },
    async handle({ api, params }) {
      const session = await api.sessions.get({ id: params.id });
      const pending = session.pendingAction;
      return {
        status: 200,
        body: {
          ...sessionToBody(session),
          pending_action: pending ? { run_id: pending.runId, tool_calls: pending.toolCalls } : null,
        },
      };
    },
  }),
  defineRoute({
    method: 'patch',
    path: '/sessions/{id}',
    operationId: 'updateSession',
    summary: 'Update a session',
    description:
      'Updates title, status, agent_name, metadata and/or config (metadata and config replace ' +
      'the stored value whole). With `expected_version`, the write applies only if the stored ' +
      'version still equals it (409 otherwise).',
    tag: 'sessions',
    caller: 'required',
    request: {
      params: SessionIdParams,
      body: UpdateSessionBody,
      examples: {
        config: { config: { model: 'gpt-4o-mini', temperature: 0.2 } },
        metadata: { metadata: { workflow_id: 'pr-review', pr_number: '42' }, expected_version: 1 },
        agent: { agent_name: 'security-auditor', status: 'suspended' },
      },
    },
    responses: {
      200: { description: 'The updated session', schema: SessionBody },
      ...CALLER_ERRORS,
      ...BODY_ERRORS,
      404: SESSION_NOT_FOUND,
      409: errorResponse('expected_version differs from the stored version'),
      422: INVALID,
    },
    async handle({ api, params, body }) {
      const session = await api.sessions.update(updateSessionInput(params.id, body));
      return { status: 200, body: sessionToBody(session) };
    },
  }),
  defineRoute({
    method: 'delete',
    path: '/sessions/{id}',
    operationId: 'deleteSession',
    summary: 'Delete a session',
    description: 'Deletes the session with its messages, runs, checkpoints and thread memory.',
    tag: 'sessions',
    caller: 'required',
    request: { params: SessionIdParams },
    responses: {
      204: { description: 'Deleted' },
      ...CALLER_ERRORS,
      404: SESSION_NOT_FOUND,
      422: INVALID,
    },
    async handle({ api, params }) {
      await api.sessions.delete({ id: params.id });
      return { status: 204 };
    },
  }),
];

function repeatedQuery(name: string): ApiError {
  return new ApiError('VALIDATION_ERROR', `Query parameter ${name} was given more than once`, {
    issues: [{ path: `query.${name}`, message: 'given more than once' }],
  });
}
