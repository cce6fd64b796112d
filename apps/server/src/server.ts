import type { ApiServices } from '@cognition/api';
import { CircuitBreakerRegistry } from '@cognition/circuit-breaker';
import type { StorageBackend } from '@cognition/storage';
import { createServer } from 'node:http';
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Logger } from 'pino';
import type { ServerState } from './app';
import { createApp } from './app';
import type { ServerConfig } from './env';
import { describePersistence } from './env';
import { createStorage } from './storage';
import { VERSION } from './version';

export interface RunningServer {
  /** Base URL the server listens on, e.g. `http://127.0.0.1:8000`. */
  url: string;
  server: Server;
  storage: StorageBackend;
  /**
   * Graceful shutdown: stop accepting connections, let in-flight requests finish within
   * `config.shutdownGraceMs`, then cut what is left and close storage. Idempotent; resolves
   * `timedOut: true` when requests had to be cut.
   */
  shutdown(): Promise<{ timedOut: boolean }>;
}

export interface StartOptions {
  logger: Logger;
  /** Storage to use instead of the configured backend (tests). */
  storage?: StorageBackend;
}

/** Opens storage (applying migrations), builds the app and listens. */
export async function startServer(
  config: ServerConfig,
  options: StartOptions,
): Promise<RunningServer> {
  const { logger } = options;
  const storage = options.storage ?? createStorage(config.persistence);
  await storage.initialize();

  const breakers = new CircuitBreakerRegistry();
  const services: ApiServices = { storage, breakers, version: VERSION };
  const state: ServerState = { shuttingDown: false };
  const app = createApp({ config, services, logger, state });
  const server = createServer(app);

  try {
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(config.port, config.host, () => {
        server.off('error', reject);
        resolve();
      });
    });
  } catch (error) {
    await storage.close();
    throw error;
  }

  const address = server.address() as AddressInfo;
  const host = address.family === 'IPv6' ? `[${address.address}]` : address.address;
  const url = `http://${host}:${address.port}`;
  logger.info(
    {
      url,
      version: VERSION,
      storage: storage.kind,
      sandbox: config.sandbox.backend,
      workspaceRoot: config.workspaceRoot,
      scoping: config.scoping.enabled ? config.scoping.keys : false,
      apiKeys: config.apiKeys.length,
    },
    `Cognition ${VERSION} listening on ${url} (storage: ${describePersistence(config.persistence)}; sandbox: ${config.sandbox.backend})`,
  );

  let closing: Promise<{ timedOut: boolean }> | undefined;
  function shutdown(): Promise<{ timedOut: boolean }> {
    closing ??= drain(server, state, config.shutdownGraceMs, logger).then(async (result) => {
      await storage.close();
      logger.info({ timedOut: result.timedOut }, 'Cognition stopped');
      return result;
    });
    return closing;
  }

  return { url, server, storage, shutdown };
}

async function drain(
  server: Server,
  state: ServerState,
  graceMs: number,
  logger: Logger,
): Promise<{ timedOut: boolean }> {
  state.shuttingDown = true;
  logger.info({ graceMs }, 'Shutting down: no new connections, finishing in-flight requests');
  const closed = new Promise<void>((resolve) => server.close(() => resolve()));
  // Keep-alive connections become idle as their requests finish; close each as soon as it is.
  const sweeper = setInterval(() => server.closeIdleConnections(), 50);
  let timer: NodeJS.Timeout | undefined;
  const timedOut = await Promise.race([
    closed.then(() => false),
    new Promise<boolean>((resolve) => {
      timer = setTimeout(() => resolve(true), graceMs);
    }),
  ]);
  clearInterval(sweeper);
  clearTimeout(timer);
  if (timedOut) {
    logger.warn({ graceMs }, 'Shutdown grace period elapsed: closing remaining connections');
    server.closeAllConnections();
    await closed;
  }
  return { timedOut };
}
