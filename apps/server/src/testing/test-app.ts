import { FixedWindowRateLimiter } from '@cognition/api';
import type { RateLimits } from '@cognition/api';
import { CircuitBreakerRegistry } from '@cognition/circuit-breaker';
import {
  AgentRegistry,
  ContextInspector,
  createScheduling,
  InMemoryEventLog,
  ProviderRegistry,
  RegistryService,
  RunManager,
  SessionService,
  SkillLibrary,
  silentLogger,
} from '@cognition/runtime';
import type { AgentDefinition, EventListener, EventLog, EventReplay } from '@cognition/runtime';
import type { AgentEventEnvelope } from '@cognition/contracts';
import { FakeExecutionBackendFactory, ScriptedChatModel } from '@cognition/runtime/testing';
import type { ScriptEntry } from '@cognition/runtime/testing';
import { createMemoryStorage } from '@cognition/storage-memory';
import type { StorageBackend } from '@cognition/storage';
import type { Express } from 'express';
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Writable } from 'node:stream';
import type { HttpConfig, ServerState } from '../http/app';
import { createApp } from '../http/app';
import { createLogger } from '../cli/logger';
import { instrumentEventLog, instrumentSandbox, instrumentStorage } from '../telemetry/instrument';
import { ServerMetrics } from '../telemetry/metrics';
import { MetricsRunObserver } from '../telemetry/run-observer';

/** An event log that counts open subscriptions, so specs can prove streams release theirs. */
export class CountingEventLog implements EventLog {
  private open = 0;
  constructor(private readonly inner: EventLog) {}

  get openSubscriptions(): number {
    return this.open;
  }

  append(envelope: AgentEventEnvelope, fence?: Parameters<EventLog['append']>[1]): Promise<void> {
    return this.inner.append(envelope, fence);
  }

  readAfter(sessionId: string, after?: string): Promise<EventReplay> {
    return this.inner.readAfter(sessionId, after);
  }

  subscribe(sessionId: string, listener: EventListener): () => void {
    const off = this.inner.subscribe(sessionId, listener);
    this.open += 1;
    let released = false;
    return () => {
      if (!released) this.open -= 1;
      released = true;
      off();
    };
  }

  dropSession(sessionId: string): Promise<void> {
    return this.inner.dropSession(sessionId);
  }

  abandon(runIds: readonly string[], timeoutMs: number): Promise<boolean> {
    return this.inner.abandon(runIds, timeoutMs);
  }
}

export interface TestApp {
  app: Express;
  storage: StorageBackend;
  state: ServerState;
  runs: RunManager;
  context: ContextInspector;
  /** The temporary workspace: sessions' directories, and skills in `.cognition/skills`. */
  workspace: string;
  /** The workspace's skills, as runs and `GET /skills` see them. */
  skills: SkillLibrary;
  /** The breakers `/health` reports. */
  breakers: CircuitBreakerRegistry;
  eventLog: CountingEventLog;
  /** The app's own Prometheus series (served on `/metrics`). */
  metrics: ServerMetrics;
  /** The in-process model every run talks to; `model.push(...)` scripts its replies. */
  model: ScriptedChatModel;
  /** Every JSON log line written so far. */
  logs(): Record<string, unknown>[];
  /** Stops runs and removes the temp workspace. */
  close(): Promise<void>;
}

/**
 * Providers of the test app. Every run talks to the scripted model whatever the provider; the
 * entries exist so session config validation has ids and models to accept.
 */
export const TEST_PROVIDERS = {
  providers: [
    {
      id: 'fake',
      kind: 'openai_compatible' as const,
      model: 'fake-model',
      baseUrl: 'http://127.0.0.1:9/v1',
      priority: 0,
    },
    { id: 'openai', kind: 'openai' as const, model: 'gpt-4o-mini', apiKey: 'sk-test-not-used' },
  ],
};

/** A custom primary agent, as a workspace's `.cognition/agents/auditor.md` would define it. */
const AUDITOR: AgentDefinition = {
  name: 'auditor',
  description: 'Audits code without changing it.',
  mode: 'primary',
  tools: ['ls', 'read_file', 'grep'],
  model: null,
  temperature: null,
  systemPrompt: 'You audit code.',
  interruptOn: {},
  mcpServers: [],
  skills: null,
  source: '/workspace/.cognition/agents/auditor.md',
};

/** An agent that asks a person before it writes or executes (human in the loop). */
const GATEKEEPER: AgentDefinition = {
  name: 'gatekeeper',
  description: 'Writes and executes only once a person approves.',
  mode: 'primary',
  tools: ['read_file', 'write_file', 'execute'],
  model: null,
  temperature: null,
  systemPrompt: 'You ask before acting.',
  interruptOn: { write_file: ['approve', 'edit', 'reject'], execute: ['approve', 'reject'] },
  mcpServers: [],
  skills: null,
  source: '/workspace/.cognition/agents/gatekeeper.md',
};

export interface TestAppOptions extends Partial<HttpConfig> {
  /** Replies of the scripted model. */
  script?: ScriptEntry[];
  /** Per-tenant limits (in process). */
  rateLimits?: RateLimits;
  /** `COGNITION_METRICS_TOKEN` of the app's `/metrics`. */
  metricsToken?: string;
  /** false: the app gets no telemetry, as with `COGNITION_METRICS_ENABLED=false`. */
  metricsEnabled?: boolean;
}

/** Apps of this spec file not closed yet; see the `afterAll` below. */
const openApps = new Set<TestApp>();

// A spec that forgets `close()` would leave its `cognition-app-*` workspace in the OS temp dir
// (issue 31 found 100+ after one run): whatever is still open when the spec file ends is closed
// here. jest loads this module once per spec file, so the hook belongs to that file.
if (typeof afterAll === 'function') {
  afterAll(async () => {
    await Promise.all([...openApps].map((app) => app.close()));
  });
}

/**
 * `createApp` on memory storage with a real `RunManager` (scripted in-process model, fake
 * sandbox) and logs captured in memory, for supertest specs.
 */
export async function createTestApp(options: TestAppOptions = {}): Promise<TestApp> {
  const { script, rateLimits, metricsToken, metricsEnabled, ...config } = options;
  // Measured like the server's: storage, sandbox, event log and runs report to the metrics.
  const metrics = new ServerMetrics();
  const storage = instrumentStorage(createMemoryStorage(), { metrics, tracing: false });
  await storage.initialize();
  const lines: string[] = [];
  const sink = new Writable({
    write(chunk: Buffer, _encoding, callback) {
      lines.push(...chunk.toString('utf8').split('\n').filter(Boolean));
      callback();
    },
  });
  const workspace = mkdtempSync(path.join(os.tmpdir(), 'cognition-app-'));
  const model = new ScriptedChatModel(script ?? []);
  // Debug: the request lines (debug since issue 32) are part of what specs inspect.
  const logger = createLogger('debug', sink);
  const skills = new SkillLibrary({ workspace, logger });
  const breakers = new CircuitBreakerRegistry();
  const eventLog = new CountingEventLog(new InMemoryEventLog({ bufferSize: 1000 }));
  const agents = new AgentRegistry([AUDITOR, GATEKEEPER]);
  const providers = new ProviderRegistry(TEST_PROVIDERS);
  const runs = new RunManager({
    storage,
    sandbox: instrumentSandbox(new FakeExecutionBackendFactory(), { metrics, tracing: false }),
    agents,
    providers,
    eventLog: instrumentEventLog(eventLog, metrics),
    workspaceRoot: workspace,
    breakers,
    chatModelFactory: () => model,
    observer: new MetricsRunObserver(metrics),
    skills,
  });
  metrics.bind({ admission: () => runs.admission(), breakers: () => runs.breakerSnapshots() });
  const context = new ContextInspector({ storage, agents, providers, skills });
  const state: ServerState = { shuttingDown: false };
  const app = createApp({
    config: {
      scoping: { enabled: false, keys: [] },
      apiKeys: [],
      corsOrigins: [],
      maxBodyBytes: 64 * 1024,
      sse: { retryMs: 3000, heartbeatMs: 15_000 },
      ...config,
    },
    services: {
      storage,
      runs,
      sessions: new SessionService({
        storage,
        runs,
        logger: silentLogger,
        workspaceRoot: workspace,
      }),
      context,
      skills,
      registry: new RegistryService(runs.registry, storage.registry),
      // The loop is not started: specs fire schedules with `POST /schedules/{id}/trigger`.
      schedules: createScheduling({
        storage,
        runs,
        nodeId: 'test-app',
        logger,
        allowPrivateCallbacks: true,
      }).service,
      breakers,
      version: '0.0.0-test',
      ...(rateLimits ? { rateLimiter: new FixedWindowRateLimiter(rateLimits) } : {}),
    },
    logger,
    state,
    ...(metricsEnabled === false
      ? {}
      : { telemetry: { metrics, metricsToken: metricsToken ?? null } }),
  });
  const testApp: TestApp = {
    app,
    storage,
    state,
    runs,
    context,
    workspace,
    skills,
    breakers,
    eventLog,
    metrics,
    model,
    logs: () => lines.map((line) => JSON.parse(line) as Record<string, unknown>),
    async close() {
      if (!openApps.delete(testApp)) return;
      try {
        await runs.shutdown(5000);
      } finally {
        rmSync(workspace, { recursive: true, force: true });
      }
    },
  };
  openApps.add(testApp);
  return testApp;
}
