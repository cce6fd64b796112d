import { SessionService, silentLogger } from '@cognition/runtime';
import type { StorageBackend } from '@cognition/storage';
import type { SessionLifecycle } from '../services/session-service';
import { createHTTPServer } from '@trpc/server/adapters/standalone';
import { randomUUID } from 'node:crypto';
import type { AddressInfo, Socket } from 'node:net';
import { resolveCaller } from '../auth';
import type { AuthConfig } from '../auth';
import type { ApiServices } from '../context';
import type { ContextViewService } from '../services/context-service';
import type { RegistryApi } from '../services/registry-service';
import type { RunService, SandboxReleaser } from '../services/run-service';
import { createApiContext } from '../context';
import { toTRPCError } from '../errors';
import { appRouter } from '../routers/app';

export interface TestApiServerOptions {
  storage: StorageBackend;
  /** The runtime behind `messages.send` / `runs.*` (e.g. a `RunManager` on a scripted model). */
  runs: RunService;
  /** The session model; default: the runtime's `SessionService` on `storage` and `runs`. */
  sessions?: SessionLifecycle;
  /** The context-window view behind `sessions.context` (e.g. the runtime's `ContextInspector`). */
  context: ContextViewService;
  sandbox?: SandboxReleaser;
  /** The configuration registry (e.g. the runtime's `RegistryService`). */
  registry: RegistryApi;
  /** Schedules (e.g. the runtime's `ScheduleService`); default: none (`schedules.*` answer 503). */
  schedules?: ApiServices['schedules'];
  /** Default: no API keys, scoping disabled. */
  auth?: AuthConfig;
  version?: string;
  breakers?: ApiServices['breakers'];
  /** The workspace's skills (e.g. the runtime's `SkillLibrary`); default: none. */
  skills?: ApiServices['skills'];
}

export interface TestApiServer {
  /** Base URL of the tRPC endpoint (`http://127.0.0.1:<port>/trpc`), for `createCognitionClient`. */
  url: string;
  /** Every request's headers as received, oldest first (lets tests check what a client sent). */
  requests: { path: string; headers: Record<string, string | string[] | undefined> }[];
  /**
   * Destroys the socket of every open streaming request (SSE subscriptions, streamed batches
   * such as `messages.stream`), as a network failure would, without ending the stream cleanly.
   * Returns how many were dropped. Lets tests prove that a client resumes with its last event id.
   */
  dropStreams(): number;
  close(): Promise<void>;
}

const NO_AUTH: AuthConfig = { scoping: { enabled: false, keys: [] }, apiKeys: [] };

/**
 * Serves `appRouter` on an ephemeral 127.0.0.1 port with tRPC's standalone adapter: the same
 * router, context and auth as the real server, without Express. For client and e2e tests.
 */
export async function startTestApiServer(options: TestApiServerOptions): Promise<TestApiServer> {
  const auth = options.auth ?? NO_AUTH;
  const services: ApiServices = {
    storage: options.storage,
    runs: options.runs,
    sessions:
      options.sessions ??
      new SessionService({ storage: options.storage, runs: options.runs, logger: silentLogger }),
    context: options.context,
    skills: options.skills ?? { list: () => Promise.resolve({ skills: [], problems: [] }) },
    registry: options.registry,
    ...(options.schedules ? { schedules: options.schedules } : {}),
    ...(options.sandbox ? { sandbox: options.sandbox } : {}),
    breakers: options.breakers ?? { snapshots: () => [] },
    version: options.version ?? '0.0.0-test',
  };
  const requests: TestApiServer['requests'] = [];
  const server = createHTTPServer({
    router: appRouter,
    basePath: '/trpc/',
    createContext: ({ req }) => {
      requests.push({ path: req.url ?? '', headers: { ...req.headers } });
      try {
        const caller = resolveCaller(req.headers, auth);
        return createApiContext(services, caller, randomUUID());
      } catch (error) {
        throw toTRPCError(error);
      }
    },
  });
  const streams = new Set<Socket>();
  server.on('request', (req, res) => {
    // Subscriptions (SSE) and streamed batches (`httpBatchStreamLink`, e.g. `messages.stream`).
    const streaming =
      req.headers.accept === 'text/event-stream' ||
      req.headers['trpc-accept'] === 'application/jsonl';
    if (!streaming) return;
    const socket = req.socket;
    streams.add(socket);
    res.once('close', () => streams.delete(socket));
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => resolve());
  });
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/trpc`,
    requests,
    dropStreams: () => {
      const open = [...streams];
      streams.clear();
      for (const socket of open) socket.destroy();
      return open.length;
    },
    close: () =>
      new Promise<void>((resolve, reject) => {
        server.closeAllConnections();
        server.close((error) => (error ? reject(error) : resolve()));
      }),
  };
}
