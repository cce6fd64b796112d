import { SNIPPET_CLOSE, SNIPPET_OPEN } from '@cognition/contracts';

/** Most terms of a search query that are used; the rest is ignored. */
const MAX_SEARCH_TERMS = 16;

/**
 * The words of a search query: runs of letters and digits, lower-cased, deduplicated, at most
 * {@link MAX_SEARCH_TERMS}. Every backend matches a message when it contains all of them as
 * words (SQLite FTS5 with the unicode61 tokenizer, PostgreSQL's `simple` text search
 * configuration, the memory backend's scan), so punctuation in the query never reaches a
 * query parser.
 */
export function searchTerms(q: string): string[] {
  const words = q.toLowerCase().match(/[\p{L}\p{N}]+/gu) ?? [];
  return [...new Set(words)].slice(0, MAX_SEARCH_TERMS);
}

/** The words of a text as the memory backend indexes them (same rule as {@link searchTerms}). */
export function textWords(text: string): string[] {
  return text.toLowerCase().match(/[\p{L}\p{N}]+/gu) ?? [];
}

/**
 * A passage of `text` around the first matched word, matched words wrapped in the snippet
 * markers, about `words` words long, with `…` where text was cut.
 */
export function buildSnippet(text: string, terms: readonly string[], words = 16): string {
  const wanted = new Set(terms);
  const tokens = [...text.matchAll(/[\p{L}\p{N}]+/gu)];
  const first = tokens.findIndex((token) => wanted.has(token[0].toLowerCase()));
  const start = Math.max(0, first - Math.floor(words / 2));
  const end = Math.min(tokens.length, start + words);
  if (tokens.length === 0) return text.slice(0, 200);
  const from = start === 0 ? 0 : (tokens[start]?.index ?? 0);
  const last = tokens[end - 1];
  const to = end >= tokens.length ? text.length : (last?.index ?? 0) + (last?.[0].length ?? 0);
  let out = '';
  let cursor = from;
  for (const token of tokens.slice(start, end)) {
    const index = token.index;
    if (!wanted.has(token[0].toLowerCase())) continue;
    out += text.slice(cursor, index) + SNIPPET_OPEN + token[0] + SNIPPET_CLOSE;
    cursor = index + token[0].length;
  }
  out += text.slice(cursor, to);
  return (from > 0 ? '…' : '') + out + (to < text.length ? '…' : '');
}
