import type {
  Message,
  MessageSearchHit,
  MessageSearchPage,
  MessageSearchQuery,
  Session,
} from '@cognition/contracts';
import { MessageSearchQuerySchema, StringMapSchema } from '@cognition/contracts';
import type { Scope } from '@cognition/storage';
import {
  buildSnippet,
  parseInput,
  scopeMatches,
  searchTerms,
  StorageError,
  textWords,
} from '@cognition/storage';

/**
 * The memory backend's message search: a scan of every visible session's messages. A message
 * matches when it holds every word of the query; rank is the share of its words that are query
 * words (denser matches first), then newest first.
 */
export function searchMessages(
  sessions: Iterable<Session>,
  messagesOf: (sessionId: string) => readonly Message[],
  query: MessageSearchQuery,
  scope: Scope,
): MessageSearchPage {
  const q = parseInput(MessageSearchQuerySchema, query, 'search query');
  const callerScope = parseInput(StringMapSchema, scope, 'scope');
  const terms = searchTerms(q.q);
  const all = [...sessions];
  if (
    q.sessionId !== undefined &&
    !all.some((s) => s.id === q.sessionId && scopeMatches(callerScope, s.scopes))
  ) {
    throw StorageError.sessionNotFound(q.sessionId);
  }
  const hits: MessageSearchHit[] = [];
  for (const session of all) {
    if (q.sessionId !== undefined && session.id !== q.sessionId) continue;
    if (!scopeMatches(callerScope, session.scopes)) continue;
    for (const message of messagesOf(session.id)) {
      if (q.role !== undefined && message.role !== q.role) continue;
      if (q.from && message.createdAt < q.from) continue;
      if (q.to && message.createdAt >= q.to) continue;
      const words = textWords(message.content);
      const counts = new Map<string, number>();
      for (const word of words) counts.set(word, (counts.get(word) ?? 0) + 1);
      if (!terms.every((term) => counts.has(term))) continue;
      const occurrences = terms.reduce((sum, term) => sum + (counts.get(term) ?? 0), 0);
      hits.push({
        messageId: message.id,
        sessionId: session.id,
        sessionTitle: session.title,
        role: message.role,
        createdAt: new Date(message.createdAt.getTime()),
        snippet: buildSnippet(message.content, terms),
        rank: Math.round((occurrences / Math.max(words.length, 1)) * 1e6) / 1e6,
      });
    }
  }
  hits.sort(
    (a, b) =>
      b.rank - a.rank ||
      b.createdAt.getTime() - a.createdAt.getTime() ||
      a.messageId.localeCompare(b.messageId) ||
      a.sessionId.localeCompare(b.sessionId),
  );
  return {
    hits: hits.slice(q.offset, q.offset + q.limit),
    total: hits.length,
    hasMore: q.offset + q.limit < hits.length,
  };
}
