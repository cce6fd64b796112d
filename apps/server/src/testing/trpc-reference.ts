import type { ApiServices, AuthConfig } from '@cognition/api';
import { appRouter, createApiContext, resolveCaller, toTRPCError } from '@cognition/api';
import { CircuitBreakerRegistry } from '@cognition/circuit-breaker';
import type { AgentEventEnvelope } from '@cognition/contracts';
import { RegistryService, SessionService, silentLogger } from '@cognition/runtime';
import { createExpressMiddleware } from '@trpc/server/adapters/express';
import express from 'express';
import type { Express } from 'express';
import { requestLogging } from '../http/request-log';
import { Writable } from 'node:stream';
import { createServer, ServerResponse } from 'node:http';
import type { Server } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import { apiKeyFingerprint } from '../config';
import { createLogger } from '../cli/logger';
import type { TestApp } from './test-app';

/**
 * What the specs of the hand-written tRPC responses (http/trpc-stream) share:
 * the reference they must match (tRPC's own Express adapter on the same services), a listener
 * that can cut streams like a network failure, and a record of `res.write` calls.
 */

/** Scoping by `user`, one API key: the callers of these specs. */
export const KEY = 'stream-key-0123456789';
export const AUTH: AuthConfig = {
  scoping: { enabled: true, keys: ['user'] },
  apiKeys: [{ id: apiKeyFingerprint(KEY), key: KEY }],
};
export const ALICE = { Authorization: `Bearer ${KEY}`, 'X-Cognition-Scope-User': 'alice' };
export const BOB = { Authorization: `Bearer ${KEY}`, 'X-Cognition-Scope-User': 'bob' };

/** The streaming procedures served by hand (subscriptions and streamed mutations). */
const STREAM_ROUTES = ['/trpc/runs.events', '/trpc/messages.stream'];

export interface Listening {
  url: string;
  /** Sockets of open streaming requests, so a test can cut them like a network failure. */
  streams: Set<Socket>;
  /** Every request's path and headers, in order. */
  requests: { path: string; headers: Record<string, string | string[] | undefined> }[];
  close(): Promise<void>;
}

export async function listen(app: Express): Promise<Listening> {
  const streams = new Set<Socket>();
  const requests: Listening['requests'] = [];
  // Recorded before the app sees the request: Express rewrites `req.url` under a mount path.
  const server: Server = createServer((req, res) => {
    const path = req.url ?? '';
    requests.push({ path, headers: req.headers });
    if (STREAM_ROUTES.some((route) => path.startsWith(route))) {
      streams.add(req.socket);
      res.once('close', () => streams.delete(req.socket));
    }
    app(req, res);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    streams,
    requests,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

/** The same services behind tRPC's own Express adapter only: what the handlers must match. */
export function servicesOf(t: TestApp, runs: ApiServices['runs'] = t.runs): ApiServices {
  return {
    storage: t.storage,
    runs,
    sessions: new SessionService({ storage: t.storage, runs, logger: silentLogger }),
    context: t.context,
    skills: t.skills,
    registry: new RegistryService(t.runs.registry, t.storage.registry),
    breakers: new CircuitBreakerRegistry(),
    version: 'test',
  };
}

export function referenceApp(services: ApiServices, auth: AuthConfig): Express {
  const app = express();
  app.use(
    '/trpc',
    createExpressMiddleware({
      router: appRouter,
      createContext({ req }) {
        try {
          return createApiContext(services, resolveCaller(req.headers, auth), 'reference');
        } catch (error) {
          throw toTRPCError(error);
        }
      },
    }),
  );
  return app;
}

export async function waitFor(check: () => boolean, ms = 3000): Promise<void> {
  const until = Date.now() + ms;
  while (!check()) {
    if (Date.now() > until) throw new Error('condition not met in time');
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}

export async function drain(
  stream: AsyncGenerator<AgentEventEnvelope, unknown>,
): Promise<AgentEventEnvelope[]> {
  const events: AgentEventEnvelope[] = [];
  for await (const envelope of stream) events.push(envelope);
  return events;
}

/**
 * The strings `res.write` received during the test. The hand-written handlers write each frame
 * or line as one string; tRPC's adapter writes byte chunks. So whole-string writes prove which
 * path served a stream.
 */
export function recordWrites(): { strings(): string[]; restore(): void } {
  const chunks: unknown[] = [];
  const original = ServerResponse.prototype.write;
  const spy = jest.spyOn(ServerResponse.prototype, 'write').mockImplementation(function (
    this: ServerResponse,
    ...args: unknown[]
  ) {
    chunks.push(args[0]);
    return (original as (...a: unknown[]) => boolean).apply(this, args);
  });
  return {
    strings: () => chunks.filter((chunk): chunk is string => typeof chunk === 'string'),
    restore: () => spy.mockRestore(),
  };
}

/**
 * An event stream that yields `first`, then fails as a storage outage would (its message names
 * a path, which must never reach a client): for the runtime's `events`/`eventsOfRun`.
 */
export function failingAfter(
  first: AgentEventEnvelope,
): () => Promise<AsyncGenerator<AgentEventEnvelope, void, undefined>> {
  return () =>
    Promise.resolve(
      (async function* () {
        yield await Promise.resolve(first);
        throw new Error('event store unreachable at /var/lib/x');
      })(),
    );
}

/** An Express app with the server's request logging, its log lines kept in `lines`. */
export function loggedApp(): { app: Express; lines: string[] } {
  const lines: string[] = [];
  const sink = new Writable({
    write(chunk: Buffer, _encoding, callback) {
      lines.push(chunk.toString('utf8'));
      callback();
    },
  });
  const app = express();
  app.use(requestLogging(createLogger('info', sink)));
  return { app, lines };
}
