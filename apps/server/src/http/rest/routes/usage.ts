import { ApiError } from '@cognition/api';
import type { StringMap } from '@cognition/contracts';
import type { RestRoute } from '../route';
import { defineRoute } from '../route';
import { CALLER_ERRORS, INVALID, SESSION_NOT_FOUND, errorResponse } from '../responses';
import { METADATA_QUERY_PREFIX, SessionIdParams } from '../schemas/common';
import { MessageIdParams } from '../schemas/messages';
import {
  aggregateInput,
  feedbackToBody,
  modelRowToBody,
  qaToBody,
  statsToBody,
  usageReportToBody,
} from '../usage-convert';
import {
  CostByModelBody,
  CostByModelQuery,
  FeedbackBody,
  FeedbackRequestBody,
  QaListBody,
  QaQuery,
  SessionUsageReportBody,
  StatsBody,
  StatsQuery,
} from '../schemas/usage';

const AGGREGATE_FILTERS =
  "Only sessions in the caller's scope count. Filters (all must match): `from`/`to` bound the " +
  "session's creation time (ISO-8601, `from` inclusive, `to` exclusive), `status` (including " +
  '`abandoned`: active and idle for `abandon_after_seconds`, default 1800), `agent_name`, and ' +
  '`metadata.<key>=<value>` predicates.';

/** `metadata.<key>=<value>` query parameters as a map; a repeated one is a 422. */
function metadataOf(extraQuery: Record<string, string | string[]>): StringMap {
  const metadata: StringMap = {};
  for (const [name, value] of Object.entries(extraQuery)) {
    if (Array.isArray(value)) {
      throw new ApiError('VALIDATION_ERROR', `Query parameter ${name} was given more than once`, {
        issues: [{ path: `query.${name}`, message: 'given more than once' }],
      });
    }
    metadata[name.slice(METADATA_QUERY_PREFIX.length)] = value;
  }
  return metadata;
}

/**
 * Usage, aggregates, feedback and QA. Mounted before `/sessions/{id}` so the literal paths
 * `/sessions/stats` and `/sessions/cost-by-model` are never taken for a session id.
 */
export const USAGE_ROUTES: RestRoute[] = [
  defineRoute({
    method: 'get',
    path: '/sessions/stats',
    operationId: 'sessionStats',
    summary: 'Usage and outcome figures over sessions',
    description:
      'Sessions by status, runs (total, failed, aborted), tokens, cost (`cost_complete` false ' +
      'when some call had no known price), errors and feedback; with `bucket=hour|day` the same ' +
      'figures per bucket of session creation time (UTC), for charts. ' +
      AGGREGATE_FILTERS,
    tag: 'usage',
    caller: 'required',
    request: { query: StatsQuery, extraQueryPrefix: METADATA_QUERY_PREFIX },
    responses: {
      200: { description: 'The figures', schema: StatsBody },
      ...CALLER_ERRORS,
      422: INVALID,
    },
    async handle({ api, query, extraQuery }) {
      const stats = await api.sessions.stats(aggregateInput(query, metadataOf(extraQuery)));
      return { status: 200, body: statsToBody(stats) };
    },
  }),
  defineRoute({
    method: 'get',
    path: '/sessions/cost-by-model',
    operationId: 'costByModel',
    summary: 'Calls, tokens and cost per provider/model',
    description: 'One row per provider/model, most expensive first. ' + AGGREGATE_FILTERS,
    tag: 'usage',
    caller: 'required',
    request: { query: CostByModelQuery, extraQueryPrefix: METADATA_QUERY_PREFIX },
    responses: {
      200: { description: 'One row per provider/model', schema: CostByModelBody },
      ...CALLER_ERRORS,
      422: INVALID,
    },
    async handle({ api, query, extraQuery }) {
      const rows = await api.sessions.costByModel(aggregateInput(query, metadataOf(extraQuery)));
      return { status: 200, body: { models: rows.map(modelRowToBody) } };
    },
  }),
  defineRoute({
    method: 'get',
    path: '/sessions/{id}/usage',
    operationId: 'sessionUsage',
    summary: "A session's usage: totals and per-model breakdown",
    tag: 'usage',
    caller: 'required',
    request: { params: SessionIdParams },
    responses: {
      200: { description: 'Totals and one row per provider/model', schema: SessionUsageReportBody },
      ...CALLER_ERRORS,
      404: SESSION_NOT_FOUND,
      422: INVALID,
    },
    async handle({ api, params }) {
      return { status: 200, body: usageReportToBody(await api.sessions.usage({ id: params.id })) };
    },
  }),
  defineRoute({
    method: 'put',
    path: '/sessions/{id}/messages/{mid}/feedback',
    operationId: 'setFeedback',
    summary: 'Rate an assistant message',
    description:
      'Sets the feedback of an assistant message (`score` 1..5, optional `text`), replacing any ' +
      'earlier one (idempotent). Other roles answer 422.',
    tag: 'messages',
    caller: 'required',
    request: {
      params: MessageIdParams,
      body: FeedbackRequestBody,
      examples: { rating: { score: 5, text: 'Exactly what I needed' } },
    },
    responses: {
      200: { description: 'The stored feedback', schema: FeedbackBody },
      ...CALLER_ERRORS,
      400: errorResponse('Malformed JSON body'),
      404: errorResponse('Session or message not found'),
      422: errorResponse('Invalid score/text, or the message is not an assistant message'),
    },
    async handle({ api, params, body }) {
      const feedback = await api.messages.setFeedback({
        sessionId: params.id,
        messageId: params.mid,
        score: body.score,
        ...(body.text !== undefined ? { text: body.text } : {}),
      });
      return { status: 200, body: feedbackToBody(feedback) };
    },
  }),
  defineRoute({
    method: 'delete',
    path: '/sessions/{id}/messages/{mid}/feedback',
    operationId: 'deleteFeedback',
    summary: "Remove a message's feedback",
    description: 'Idempotent: 204 whether or not the message had feedback.',
    tag: 'messages',
    caller: 'required',
    request: { params: MessageIdParams },
    responses: {
      204: { description: 'Removed (or there was none)' },
      ...CALLER_ERRORS,
      404: errorResponse('Session or message not found'),
      422: INVALID,
    },
    async handle({ api, params }) {
      await api.messages.deleteFeedback({ sessionId: params.id, messageId: params.mid });
      return { status: 204 };
    },
  }),
  defineRoute({
    method: 'get',
    path: '/sessions/{id}/qa',
    operationId: 'sessionQa',
    summary: 'Question/answer entries of a session',
    description:
      'One entry per completed turn, newest first: the question, the answer (`qa_id` is the ' +
      "assistant message's id), the tool results the answer used (`context`) and its feedback.",
    tag: 'usage',
    caller: 'required',
    request: { params: SessionIdParams, query: QaQuery },
    responses: {
      200: { description: 'The newest entries', schema: QaListBody },
      ...CALLER_ERRORS,
      404: SESSION_NOT_FOUND,
      422: INVALID,
    },
    async handle({ api, params, query }) {
      const entries = await api.sessions.qa({
        sessionId: params.id,
        ...(query.last_n !== undefined ? { lastN: query.last_n } : {}),
      });
      return { status: 200, body: qaToBody(entries) };
    },
  }),
];
