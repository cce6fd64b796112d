import { messageToBody, pageOf } from '../convert';
import type { RestRoute } from '../route';
import { defineRoute } from '../route';
import { CALLER_ERRORS, errorResponse, INVALID, SESSION_NOT_FOUND } from '../responses';
import { SessionIdParams } from '../schemas/common';
import {
  ContextWindowBody,
  ListMessagesQuery,
  MessageBody,
  MessageIdParams,
  MessageListBody,
} from '../schemas/messages';

/** The thread of a session, one message, and the context window a turn would send. */
export const MESSAGE_ROUTES: RestRoute[] = [
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
];
