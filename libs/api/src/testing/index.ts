import type { StorageBackend } from '@cognition/storage';
import { createHTTPServer } from '@trpc/server/adapters/standalone';
import { randomUUID } from 'node:crypto';
import type { AddressInfo } from 'node:net';
import { resolveCaller } from '../auth';
import type { AuthConfig } from '../auth';
import type { ApiServices } from '../context';
import { createApiContext } from '../context';
import { toTRPCError } from '../errors';
import { appRouter } from '../routers/app';

export interface TestApiServerOptions {
  storage: StorageBackend;
  /** Default: no API keys, scoping disabled. */
  auth?: AuthConfig;
  version?: string;
  breakers?: ApiServices['breakers'];
}

export interface TestApiServer {
  /** Base URL of the tRPC endpoint (`http://127.0.0.1:<port>/trpc`), for `createCognitionClient`. */
  url: string;
  /** Every request's headers as received, oldest first (lets tests check what a client sent). */
  requests: { path: string; headers: Record<string, string | string[] | undefined> }[];
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
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => resolve());
  });
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/trpc`,
    requests,
    close: () =>
      new Promise<void>((resolve, reject) => {
        server.closeAllConnections();
        server.close((error) => (error ? reject(error) : resolve()));
      }),
  };
}
