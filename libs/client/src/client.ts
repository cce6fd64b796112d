import type { AppRouter } from '@cognition/api';
import type { TRPCClient } from '@trpc/client';
import {
  createTRPCClient,
  httpBatchStreamLink,
  httpSubscriptionLink,
  splitLink,
} from '@trpc/client';
import { EventSource as FetchEventSource } from 'eventsource';
import superjson from 'superjson';

/** The typed client: `client.sessions.create.mutate({...})`, `client.sessions.list.query()`. */
export type CognitionClient = TRPCClient<AppRouter>;

/** An `EventSource` class that accepts a `fetch` option (like the `eventsource` package). */
export type EventSourceClass = typeof FetchEventSource;

export interface CognitionClientOptions {
  /** The tRPC endpoint, e.g. `http://127.0.0.1:8000/trpc`. */
  url: string;
  /** Sent as `Authorization: Bearer <apiKey>` on every request, subscriptions included. */
  apiKey?: string;
  /**
   * Tenant scope, sent as one `X-Cognition-Scope-<Key>` header per entry on every request
   * (`{ user: 'alice' }` -> `X-Cognition-Scope-User: alice`).
   */
  scopes?: Record<string, string>;
  /** fetch implementation for queries, mutations and subscriptions (default: global fetch). */
  fetch?: typeof fetch;
  /**
   * EventSource implementation for subscriptions. Default: the `eventsource` package, which
   * works in Node and browsers and, unlike the browser's native EventSource, can send headers.
   */
  EventSource?: EventSourceClass;
}

function headerCase(scopeKey: string): string {
  return scopeKey
    .split('-')
    .map((part) => part.charAt(0).toUpperCase() + part.slice(1))
    .join('-');
}

/** The auth and scope headers every request of this client carries. */
export function cognitionHeaders(
  options: Pick<CognitionClientOptions, 'apiKey' | 'scopes'>,
): Record<string, string> {
  const headers: Record<string, string> = {};
  if (options.apiKey !== undefined) headers['Authorization'] = `Bearer ${options.apiKey}`;
  for (const [key, value] of Object.entries(options.scopes ?? {})) {
    headers[`X-Cognition-Scope-${headerCase(key)}`] = value;
  }
  return headers;
}

/**
 * Creates a typed client for the Cognition tRPC API. Queries and mutations go through one
 * streaming batch link; subscriptions run over Server-Sent Events. Both use superjson, so
 * dates arrive as `Date`s, and both send the same auth and scope headers.
 */
export function createCognitionClient(options: CognitionClientOptions): CognitionClient {
  const headers = cognitionHeaders(options);
  const baseFetch = options.fetch ?? ((input, init) => fetch(input, init));
  const EventSourceImpl = options.EventSource ?? FetchEventSource;

  return createTRPCClient<AppRouter>({
    links: [
      splitLink({
        condition: (op) => op.type === 'subscription',
        true: httpSubscriptionLink({
          url: options.url,
          transformer: superjson,
          EventSource: EventSourceImpl,
          // A browser's EventSource cannot set headers; the fetch-based one can, through this.
          eventSourceOptions: () => ({
            fetch: (input, init) =>
              baseFetch(input, { ...init, headers: { ...init.headers, ...headers } }),
          }),
        }),
        false: httpBatchStreamLink({
          url: options.url,
          transformer: superjson,
          fetch: baseFetch,
          headers: () => headers,
        }),
      }),
    ],
  });
}
