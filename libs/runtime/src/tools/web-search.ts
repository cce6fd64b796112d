import { z } from 'zod';
import type { RuntimeTool } from './types';
import { capOutput, defineTool } from './types';

export const WEB_SEARCH_PROVIDERS = ['searxng', 'brave', 'tavily'] as const;
export type WebSearchProvider = (typeof WEB_SEARCH_PROVIDERS)[number];

/**
 * A configured search provider. `url` is the operator's: SearXNG's base URL (queried as
 * `/search?q=…&format=json`), or a replacement for Brave's / Tavily's API base (a proxy, a test
 * fake). It may be a private address: the operator chose it, the model cannot change it.
 */
export interface WebSearchOptions {
  provider: WebSearchProvider;
  url?: string;
  apiKey?: string;
  /** Default 15 s. */
  timeoutMs?: number;
}

export interface SearchResult {
  title: string;
  url: string;
  snippet: string;
}

const DEFAULT_BASE: Record<WebSearchProvider, string | null> = {
  searxng: null,
  brave: 'https://api.search.brave.com',
  tavily: 'https://api.tavily.com',
};

const MAX_RESULTS = 20;

interface ProviderRequest {
  url: URL;
  init: RequestInit;
  parse: (body: unknown) => SearchResult[];
}

const text = (value: unknown): string => (typeof value === 'string' ? value : '');

function resultsOf(list: unknown, snippetKey: string): SearchResult[] {
  if (!Array.isArray(list)) return [];
  return list.flatMap((item: unknown) => {
    if (typeof item !== 'object' || item === null) return [];
    const record = item as Record<string, unknown>;
    const url = text(record['url']);
    return url === ''
      ? []
      : [{ title: text(record['title']), url, snippet: text(record[snippetKey]) }];
  });
}

function request(options: WebSearchOptions, query: string, max: number): ProviderRequest {
  const base = (options.url ?? DEFAULT_BASE[options.provider] ?? '').replace(/\/+$/, '');
  const key = options.apiKey ?? '';
  switch (options.provider) {
    case 'searxng': {
      const url = new URL(`${base}/search`);
      url.searchParams.set('q', query);
      url.searchParams.set('format', 'json');
      return {
        url,
        init: { headers: { Accept: 'application/json' } },
        parse: (body) => resultsOf((body as { results?: unknown }).results, 'content'),
      };
    }
    case 'brave': {
      const url = new URL(`${base}/res/v1/web/search`);
      url.searchParams.set('q', query);
      url.searchParams.set('count', String(max));
      return {
        url,
        init: { headers: { Accept: 'application/json', 'X-Subscription-Token': key } },
        parse: (body) =>
          resultsOf((body as { web?: { results?: unknown } }).web?.results, 'description'),
      };
    }
    case 'tavily':
      return {
        url: new URL(`${base}/search`),
        init: {
          method: 'POST',
          headers: { 'Content-Type': 'application/json', Authorization: `Bearer ${key}` },
          body: JSON.stringify({ query, max_results: max }),
        },
        parse: (body) => resultsOf((body as { results?: unknown }).results, 'content'),
      };
  }
}

/**
 * `web_search`: titles, links and snippets from the configured provider's API (never a search
 * engine's HTML). The catalog offers it only when a provider is configured.
 */
export function createWebSearchTool(options: WebSearchOptions): RuntimeTool {
  const timeoutMs = options.timeoutMs ?? 15_000;
  return defineTool({
    name: 'web_search',
    idempotent: true,
    description:
      'Search the web. Returns up to max_results (default 5) results as JSON: [{title, url, snippet}]. Fetch a result with web_fetch to read it.',
    schema: z.strictObject({
      query: z.string().min(1).max(400),
      max_results: z.number().int().min(1).max(MAX_RESULTS).optional(),
    }),
    async run({ query, max_results: max = 5 }, ctx) {
      const { url, init, parse } = request(options, query, max);
      const signal = AbortSignal.any([ctx.signal, AbortSignal.timeout(timeoutMs)]);
      try {
        const response = await fetch(url, { ...init, signal });
        if (!response.ok) {
          const detail = (await response.text()).slice(0, 200);
          return {
            output: `Search failed: ${options.provider} answered ${response.status} ${detail}`,
            exitCode: 1,
          };
        }
        const results = parse(await response.json()).slice(0, max);
        return { output: capOutput(JSON.stringify(results, null, 2)), exitCode: 0 };
      } catch (error) {
        if (ctx.signal.aborted) return { output: 'Aborted', exitCode: 130 };
        if (signal.aborted) return { output: `Timed out after ${timeoutMs} ms`, exitCode: 124 };
        const message = error instanceof Error ? error.message : String(error);
        return { output: `Search failed: ${message}`, exitCode: 1 };
      }
    },
  });
}
