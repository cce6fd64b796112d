import type { MessageSearchPage } from '@cognition/contracts';
import type { z } from 'zod';
import type { RestRoute } from '../route';
import { pageOf } from '../convert';
import { defineRoute } from '../route';
import { CALLER_ERRORS, errorResponse, INVALID } from '../responses';
import { SessionIdParams } from '../schemas/common';
import { SearchPageBody, SearchQuery, SessionSearchQuery } from '../schemas/search';

function pageToBody(page: MessageSearchPage): z.infer<typeof SearchPageBody> {
  return {
    hits: page.hits.map((hit) => ({
      message_id: hit.messageId,
      session_id: hit.sessionId,
      session_title: hit.sessionTitle,
      role: hit.role,
      created_at: hit.createdAt.toISOString(),
      snippet: hit.snippet,
      rank: hit.rank,
    })),
    total: page.total,
    has_more: page.hasMore,
  };
}

function searchInput(query: z.output<typeof SessionSearchQuery>) {
  return {
    q: query.q,
    ...(query.role !== undefined ? { role: query.role } : {}),
    ...(query.from !== undefined ? { from: query.from } : {}),
    ...(query.to !== undefined ? { to: query.to } : {}),
    ...pageOf(query),
  };
}

const DESCRIPTION =
  'Full-text search over message contents, best match first (BM25 on SQLite, ts_rank on ' +
  'PostgreSQL), each hit with a highlighted snippet and its session. Every word of `q` must ' +
  'occur (case-insensitive); punctuation is ignored; a `q` without any word is a 422. ';

/**
 * Recall search. Mounted before `/sessions/{id}/messages/{mid}` so `search` is never taken for
 * a message id.
 */
export const SEARCH_ROUTES: RestRoute[] = [
  defineRoute({
    method: 'get',
    path: '/sessions/{id}/messages/search',
    operationId: 'searchSessionMessages',
    summary: "Search a session's messages",
    description: DESCRIPTION + 'Filters: `role`, `from`/`to` (creation time); paged like messages.',
    tag: 'messages',
    caller: 'required',
    request: { params: SessionIdParams, query: SessionSearchQuery },
    responses: {
      200: { description: 'One page of hits', schema: SearchPageBody },
      ...CALLER_ERRORS,
      404: errorResponse("Session not found (or outside the caller's scope)"),
      422: INVALID,
    },
    async handle({ api, params, query }) {
      const page = await api.messages.search({ ...searchInput(query), sessionId: params.id });
      return { status: 200, body: pageToBody(page) };
    },
  }),
  defineRoute({
    method: 'get',
    path: '/messages/search',
    operationId: 'searchMessages',
    summary: 'Search the messages of every session the caller may see',
    description:
      DESCRIPTION +
      "Another tenant's messages never match. Filters: `session_id`, `role`, `from`/`to`; paged " +
      'like messages.',
    tag: 'messages',
    caller: 'required',
    request: { query: SearchQuery },
    responses: {
      200: { description: 'One page of hits', schema: SearchPageBody },
      ...CALLER_ERRORS,
      404: errorResponse(
        "session_id names a session that is missing or outside the caller's scope",
      ),
      422: INVALID,
    },
    async handle({ api, query }) {
      const page = await api.messages.search({
        ...searchInput(query),
        ...(query.session_id !== undefined ? { sessionId: query.session_id } : {}),
      });
      return { status: 200, body: pageToBody(page) };
    },
  }),
];
