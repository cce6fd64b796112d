import type { ApiServices } from '@cognition/api';
import { FixedWindowRateLimiter } from '@cognition/api';
import { CircuitBreakerRegistry } from '@cognition/circuit-breaker';
import type { RedisCluster } from '@cognition/cluster-redis';
import type { ContextInspector, RunManager, SkillLibrary } from '@cognition/runtime';
import {
  createScheduling,
  RegistryService,
  UserGraphs,
  loadUserGraphs,
  withEncryptedRegistry,
} from '@cognition/runtime';
import type { ExecutionBackendFactory } from '@cognition/sandbox';
import type { StorageBackend } from '@cognition/storage';
import { createServer } from 'node:http';
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import type { Logger } from 'pino';
import type { ServerState } from '../http/app';
import { createApp } from '../http/app';
import type { ServerConfig } from '../config';
import { describePersistence, networkWarnings } from '../config';
import { createRuntime, sessionsRoot } from './runtime';
import { createSessionLifecycle } from './sessions';
import { createSandbox } from './sandbox';
import { createSecretCipher } from './secrets';
import { createStorage } from './storage';
import { storeIndexOf } from './store-index';
import { answerClientErrors } from '../http/client-error';
import { createServerTelemetry } from '../telemetry';
import { VERSION } from '../version';

export interface RunningServer {
  /** Base URL the server listens on, e.g. `http://127.0.0.1:8000`. */
  url: string;
  server: Server;
  storage: StorageBackend;
  runs: RunManager;
  /**
   * Graceful shutdown: stop accepting connections, let in-flight requests and active runs finish
   * within `config.shutdownGraceMs`, then cut what is left (remaining runs are left `running` for
   * the next process to resume, or, with `COGNITION_RUN_RECOVERY=interrupt`, end `interrupted`
   * with their terminal event) and close storage. Idempotent; resolves `timedOut: true` when requests
   * or runs had to be cut.
   */
  shutdown(): Promise<{ timedOut: boolean }>;
}

export interface StartOptions {
  logger: Logger;
  /** Storage to use instead of the configured backend (tests). */
  storage?: StorageBackend;
  /** Sandbox to use instead of the configured backend (tests). */
  sandbox?: ExecutionBackendFactory;
  /** The dashboard's built assets; default: dist/apps/admin beside this bundle's dist/apps/server. */
  adminDir?: string;
}

/**
 * Composes the server and listens: storage (migrations applied), one circuit-breaker registry
 * shared by the sandbox, the runtime and `/health`, the sandbox, the agent runtime, then — before
 * the port opens — recovery of runs a killed process left active.
 */
export async function startServer(
  config: ServerConfig,
  options: StartOptions,
): Promise<RunningServer> {
  const { logger } = options;
  // An opt-in of protected mode is in effect: said at every start, before anything else.
  for (const warning of networkWarnings(config)) {
    logger.warn({ setting: warning.setting }, warning.message);
  }
  // The graphs of langgraph.json, loaded once, first: one that fails stops the start before
  // anything was opened (the error names the file, graph, module and export).
  const langgraphConfig = config.tools.langgraphConfig;
  const graphs = langgraphConfig
    ? await loadUserGraphs(langgraphConfig, logger.child({ component: 'graph' }))
    : UserGraphs.empty();
  if (langgraphConfig) {
    logger.info(
      { file: langgraphConfig, graphs: graphs.list().map((g) => g.graphId) },
      `Loaded ${graphs.list().length} graph(s) from ${langgraphConfig}`,
    );
  }
  // The store's semantic index (langgraph.json's store.index): its provider is checked now.
  const storeIndex = await storeIndexOf(graphs.config, config.llm);
  const telemetry = await createServerTelemetry(config.telemetry, logger);
  const backend = telemetry.storage(
    options.storage ??
      createStorage(config.persistence, {
        artifactMaxBytes: config.artifactMaxBytes,
        ...(storeIndex ? { storeIndex } : {}),
      }),
  );
  try {
    await backend.initialize();
  } catch (error) {
    await telemetry.shutdown();
    throw error;
  }
  let storage: StorageBackend;
  try {
    // Every part that reads or writes the registry gets its secrets encrypted at rest.
    storage = withEncryptedRegistry(
      backend,
      createSecretCipher(config.secrets, backend.kind, logger),
      logger.child({ component: 'registry' }),
    );
  } catch (error) {
    await backend.close();
    await telemetry.shutdown();
    throw error;
  }

  const breakers = new CircuitBreakerRegistry();
  let runs: RunManager;
  let context: ContextInspector;
  let llm: string;
  let cluster: RedisCluster | null;
  let skills: SkillLibrary;
  let sandbox: ExecutionBackendFactory;
  try {
    sandbox = telemetry.sandbox(
      options.sandbox ??
        (await createSandbox(config.sandbox, {
          storage,
          breakers,
          logger,
          stateDir: path.join(config.workspaceRoot, '.cognition', 'sandbox'),
        })),
    );
    ({ runs, context, llm, cluster, skills } = await createRuntime(config, {
      storage,
      sandbox,
      breakers,
      logger,
      observer: telemetry.observer,
      wrapEventLog: telemetry.eventLog,
      userGraphs: graphs,
    }));
    const started = runs;
    telemetry.metrics?.bind({
      admission: () => started.admission(),
      breakers: () => started.breakerSnapshots(),
    });
    const { resumed, interrupted, failed, settled, callbacks } = await runs.recover();
    const recovered = resumed.length + interrupted.length + failed.length + settled.length;
    logger.info(
      {
        resumedRuns: resumed.map((run) => run.id),
        interruptedRuns: interrupted.map((run) => run.id),
        failedRuns: failed.map((run) => run.id),
        ...(settled.length > 0 ? { settledRuns: settled.map((run) => run.id) } : {}),
        pendingCallbacks: callbacks,
      },
      `Recovered ${recovered} run(s) left active by a previous process: ${resumed.length} resumed, ${interrupted.length} marked interrupted, ${failed.length} failed (resumed too often)` +
        (settled.length > 0
          ? `, ${settled.length} ended as their stored terminal event says`
          : '') +
        `; ${callbacks} pending callback deliveries resumed`,
    );
  } catch (error) {
    await storage.close();
    await telemetry.shutdown();
    throw error;
  }

  const lifecycle = createSessionLifecycle({
    config: config.sessions,
    storage,
    runs,
    workspaceRoot: sessionsRoot(config.workspaceRoot),
    release: (id) => sandbox.release(id),
    logger,
  });
  const scheduling = createScheduling({
    storage,
    runs,
    graphs,
    nodeId: config.schedules.nodeId,
    logger: logger.child({ component: 'schedules' }),
    allowPrivateCallbacks: config.callbacks.allowPrivateNetwork,
    releaseSandbox: (id) => sandbox.release(id),
    observer: telemetry.scheduleObserver,
    pollMs: config.schedules.pollMs,
    misfireGraceMs: config.schedules.misfireGraceMs,
    claimTimeoutMs: config.schedules.claimTimeoutMs,
    lookAheadMs: config.schedules.lookAheadMs,
  });
  const services: ApiServices = {
    storage,
    runs,
    sessions: lifecycle.service,
    schedules: scheduling.service,
    context,
    skills,
    registry: new RegistryService(
      runs.registry,
      storage.registry,
      logger.child({ component: 'registry' }),
    ),
    sandbox,
    breakers,
    version: VERSION,
    ...rateLimiterOf(config, cluster),
    ...(cluster && config.cluster
      ? { cluster: { nodeId: config.cluster.nodeId, redis: () => cluster.health() } }
      : {}),
  };
  const state: ServerState = { shuttingDown: false };
  const adminDir = options.adminDir ?? path.join(__dirname, '../admin');
  const app = createApp({
    config,
    services,
    logger,
    state,
    adminDir,
    telemetry,
    langgraph: {
      graphs,
      checkpointer: storage.checkpointer,
      assistants: storage.assistants,
      store: storage.store,
      retention: storage.checkpoints,
      onRunStopped: (listener) => runs.onRunStopped(listener),
    },
  });
  const server = createServer(app);
  server.keepAliveTimeout = config.keepAliveTimeoutMs;
  answerClientErrors(server);

  try {
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(config.port, config.host, () => {
        server.off('error', reject);
        resolve();
      });
    });
  } catch (error) {
    await runs.shutdown(1000);
    await cluster?.close();
    await storage.close();
    await telemetry.shutdown();
    throw error;
  }

  // Started once recovery is done and the server listens; stopped first on shutdown.
  if (config.schedules.enabled) scheduling.runner.start();

  const address = server.address() as AddressInfo;
  const host = address.family === 'IPv6' ? `[${address.address}]` : address.address;
  const url = `http://${host}:${address.port}`;
  logger.info(
    {
      url,
      version: VERSION,
      storage: storage.kind,
      sandbox: sandbox.kind,
      workspaceRoot: config.workspaceRoot,
      scoping: config.scoping.enabled ? config.scoping.keys : false,
      apiKeys: config.apiKeys.length,
      llm,
    },
    `Cognition ${VERSION} listening on ${url} — storage: ${describePersistence(config.persistence)}; ` +
      `sandbox: ${config.sandbox.backend}; llm: ${llm}; ` +
      (config.cluster ? `node: ${config.cluster.nodeId} (redis cluster); ` : '') +
      `scoping: ${config.scoping.enabled ? `on (${config.scoping.keys.join(', ')})` : 'off'}; ` +
      `api keys: ${config.apiKeys.length > 0 ? config.apiKeys.length : 'none (open)'}`,
  );

  let closing: Promise<{ timedOut: boolean }> | undefined;
  function shutdown(): Promise<{ timedOut: boolean }> {
    lifecycle.stop();
    closing ??= scheduling.runner
      .stop()
      .then(() => drain(server, runs, state, config, logger))
      .then(async (result) => {
        await cluster?.close();
        await storage.close();
        await telemetry.shutdown();
        logger.info({ timedOut: result.timedOut }, 'Cognition stopped');
        return result;
      });
    return closing;
  }

  return { url, server, storage, runs, shutdown };
}

/**
 * The per-tenant limiter when a limit is configured: shared through Redis with several nodes,
 * in process on one.
 */
function rateLimiterOf(
  config: ServerConfig,
  cluster: RedisCluster | null,
): Pick<ApiServices, 'rateLimiter'> {
  const limits = config.rateLimits;
  if (limits.requests === null && limits.runs === null) return {};
  return {
    rateLimiter: cluster ? cluster.rateLimiter(limits) : new FixedWindowRateLimiter(limits),
  };
}

/** Time runs get, after the grace period, to checkpoint and emit their terminal event. */
const RUN_WIND_DOWN_MS = 5000;
/** Time open streams get to write their last frames once the runs ended. */
const STREAM_FLUSH_MS = 1000;

async function drain(
  server: Server,
  runs: RunManager,
  state: ServerState,
  config: ServerConfig,
  logger: Logger,
): Promise<{ timedOut: boolean }> {
  const graceMs = config.shutdownGraceMs;
  const handOff = config.runRecovery === 'resume';
  state.shuttingDown = true;
  logger.info(
    { graceMs, activeRuns: runs.activeRunIds().length },
    'Shutting down: no new connections or messages, finishing in-flight requests and runs',
  );
  const closed = new Promise<void>((resolve) => server.close(() => resolve()));
  // A run whose client went away holds no connection; it still deserves the grace period.
  let poll: NodeJS.Timeout | undefined;
  const runsDone = new Promise<void>((resolve) => {
    const check = () => {
      if (runs.activeRunIds().length > 0) return false;
      resolve();
      return true;
    };
    if (!check()) poll = setInterval(check, 50);
  });
  // Keep-alive connections become idle as their requests finish; close each as soon as it is.
  const sweeper = setInterval(() => server.closeIdleConnections(), 50);
  let timer: NodeJS.Timeout | undefined;
  const timedOut = await Promise.race([
    Promise.all([closed, runsDone]).then(() => false),
    new Promise<boolean>((resolve) => {
      timer = setTimeout(() => resolve(true), graceMs);
    }),
  ]);
  clearInterval(sweeper);
  clearInterval(poll);
  clearTimeout(timer);
  if (timedOut) {
    logger.warn(
      { graceMs, activeRuns: runs.activeRunIds() },
      handOff
        ? 'Shutdown grace period elapsed: leaving remaining runs to the next process (resumed from their last checkpoint) and closing connections'
        : 'Shutdown grace period elapsed: interrupting remaining runs and closing connections',
    );
  }
  // Remaining runs are handed off (streams end without a terminal event; clients reconnect to
  // the next process), or end `interrupted` with their terminal event.
  await runs.shutdown(RUN_WIND_DOWN_MS);
  if (timedOut) {
    // Let the streams that just received their terminal event write it out before cutting.
    let flush: NodeJS.Timeout | undefined;
    await Promise.race([
      closed,
      new Promise<void>((resolve) => {
        flush = setTimeout(resolve, STREAM_FLUSH_MS);
      }),
    ]);
    clearTimeout(flush);
    server.closeAllConnections();
  }
  await closed;
  return { timedOut };
}
