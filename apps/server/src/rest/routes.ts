import { ApiError } from '@cognition/api';
import {
  createSessionInput,
  healthToBody,
  messageToBody,
  sessionToBody,
  updateSessionInput,
  pageOf,
} from './convert';
import type { RestRoute } from './route';
import { CALLER_ERRORS, errorResponse, INVALID } from './responses';
import { ARTIFACT_ROUTES } from './artifact-routes';
import { REGISTRY_ROUTES } from './registry-routes';
import { RUN_ROUTES } from './run-routes';
import { SEARCH_ROUTES } from './search-routes';
import { SKILL_ROUTES } from './skill-routes';
import { USAGE_ROUTES } from './usage-routes';
import { SESSION_LIFECYCLE_ROUTES } from './session-routes';
import { defineRoute } from './route';
import {
  ContextWindowBody,
  CreateSessionBody,
  HealthBody,
  ListMessagesQuery,
  ListSessionsQuery,
  MessageBody,
  MessageIdParams,
  MessageListBody,
  METADATA_QUERY_PREFIX,
  ReadyBody,
  SessionBody,
  SessionIdParams,
  SessionListBody,
  UpdateSessionBody,
} from './schemas';

const SESSION_NOT_FOUND = errorResponse("Session not found (or outside the caller's scope)");
const BODY_ERRORS = {
  400: errorResponse('Malformed JSON body'),
  413: errorResponse('Body larger than COGNITION_MAX_BODY_BYTES'),
};

/**
 * The REST compatibility surface: the original Cognition's paths and snake_case shapes, each a
 * thin adapter over one tRPC procedure. The app mounts exactly these and the OpenAPI document
 * describes exactly these.
 */
export const REST_ROUTES: RestRoute[] = [
  // First: their literal paths (`/sessions/stats`, `/sessions/{id}/messages/search`, ...) must
  // not be taken for `/sessions/{id}` or `/sessions/{id}/messages/{mid}`.
  ...USAGE_ROUTES,
  ...SEARCH_ROUTES,
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
  defineRoute({
    method: 'get',
    path: '/sessions/{id}/messages',
    operationId: 'listMessages',
    summary: 'List the messages of a session',
    description:
      'Newest first by default (`order=desc`, as the original API: the first page is the most ' +
      'recent messages); `order=asc` gives thread order. Offsets count in the chosen order; ' +
      '`limit` defaults to 50.',
    tag: 'messages',
    caller: 'required',
    request: { params: SessionIdParams, query: ListMessagesQuery },
    responses: {
      200: { description: 'One page of messages', schema: MessageListBody },
      ...CALLER_ERRORS,
      404: SESSION_NOT_FOUND,
      422: INVALID,
    },
    async handle({ api, params, query }) {
      const page = await api.messages.list({
        sessionId: params.id,
        ...pageOf(query),
        order: query.order ?? 'desc',
      });
      return {
        status: 200,
        body: {
          messages: page.messages.map(messageToBody),
          total: page.total,
          has_more: page.hasMore,
        },
      };
    },
  }),
  defineRoute({
    method: 'get',
    path: '/sessions/{id}/messages/{mid}',
    operationId: 'getMessage',
    summary: 'Get one message of a session',
    tag: 'messages',
    caller: 'required',
    request: { params: MessageIdParams },
    responses: {
      200: { description: 'The message', schema: MessageBody },
      ...CALLER_ERRORS,
      404: errorResponse(
        'Session or message not found (a message of another session is not found)',
      ),
      422: INVALID,
    },
    async handle({ api, params }) {
      const message = await api.messages.get({ sessionId: params.id, messageId: params.mid });
      return { status: 200, body: messageToBody(message) };
    },
  }),
  defineRoute({
    method: 'get',
    path: '/sessions/{id}/context',
    operationId: 'getSessionContext',
    summary: "What the session's next model call would be sent",
    description:
      'The context-window view: tokens per part (system prompt, tool schemas, summary, ' +
      "messages) against the agent's budget and the model's window, whether the next call " +
      'compacts first, and the current summary with the messages it covers. Read-only; the ' +
      'messages themselves stay readable through `/sessions/{id}/messages`.',
    tag: 'sessions',
    caller: 'required',
    request: { params: SessionIdParams },
    responses: {
      200: { description: 'The context-window view', schema: ContextWindowBody },
      ...CALLER_ERRORS,
      404: SESSION_NOT_FOUND,
      422: errorResponse(
        'Invalid id, or no provider can serve the session (PROVIDER_CONFIG_ERROR)',
      ),
    },
    async handle({ api, params }) {
      return { status: 200, body: await api.sessions.context({ id: params.id }) };
    },
  }),
  defineRoute({
    method: 'get',
    path: '/health',
    operationId: 'health',
    summary: 'Service health',
    description:
      'Open to every caller (no key needed). `active_sessions` counts active sessions in the ' +
      "caller's scope, `runs` this process's run admission (executing, queued, limit) and `node` " +
      'its id, the runs it owns and (several nodes) its Redis; they are null for a caller that ' +
      'presented no key (when keys are configured) or not every scope header (when scoping is ' +
      'enabled). Always 200; read `status`.',
    tag: 'operations',
    caller: 'optional',
    request: {},
    responses: {
      200: { description: 'Health report', schema: HealthBody },
      401: errorResponse('An API key was presented and is wrong'),
    },
    async handle({ api, identified }) {
      const report = await api.health.get();
      // Load figures are for callers that identified themselves, like the session count.
      const activeSessions = identified ? report.activeSessions : null;
      const runs = identified ? report.runs : null;
      const node = identified ? report.node : null;
      return { status: 200, body: healthToBody({ ...report, activeSessions, runs, node }) };
    },
  }),
  defineRoute({
    method: 'get',
    path: '/ready',
    operationId: 'ready',
    summary: 'Readiness',
    description: '200 once storage answers; 503 before that and while shutting down.',
    tag: 'operations',
    caller: 'key',
    request: {},
    responses: {
      200: { description: 'Ready', schema: ReadyBody },
      401: errorResponse('Missing or invalid API key (when API keys are configured)'),
      503: { description: 'Not ready', schema: ReadyBody },
    },
    async handle({ api, shuttingDown }) {
      // A draining node reports not-ready so load balancers stop sending it new work.
      const ready = !shuttingDown && (await api.health.ready()).ready;
      return { status: ready ? 200 : 503, body: { ready } };
    },
  }),
  ...RUN_ROUTES,
  ...ARTIFACT_ROUTES,
  ...SESSION_LIFECYCLE_ROUTES,
  ...SKILL_ROUTES,
  ...REGISTRY_ROUTES,
];

function repeatedQuery(name: string): ApiError {
  return new ApiError('VALIDATION_ERROR', `Query parameter ${name} was given more than once`, {
    issues: [{ path: `query.${name}`, message: 'given more than once' }],
  });
}
