import type { CircuitBreakerSnapshot } from '@cognition/circuit-breaker';
import type {
  ArtifactStore,
  FeedbackStore,
  MessageStore,
  RunStore,
  SearchStore,
  SessionStore,
  StorageBackendKind,
  StorageHealth,
  UsageStore,
} from '@cognition/storage';
import type { SkillList } from '@cognition/contracts';
import type { ContextViewService } from './services/context-service';
import type { Caller } from './auth';
import type { RateLimiter } from './rate-limit';
import type { RegistryApi } from './services/registry-service';
import type { RunService, SandboxReleaser } from './services/run-service';
import type { ScheduleApi } from './services/schedule-service';
import type { SessionLifecycle } from './services/session-service';

/** One circuit breaker's figures as reported by `health.get` (a `CircuitBreakerRegistry` snapshot). */
export type BreakerSnapshot = CircuitBreakerSnapshot;

/**
 * The part of the storage port the API uses; every `StorageBackend` satisfies it. Deliberately
 * not `StorageBackend` itself: the router's type ships in the client package's `.d.ts`, and the
 * checkpointer/store members would drag LangGraph's types into every client.
 */
export interface ApiStorage {
  readonly kind: StorageBackendKind;
  readonly sessions: SessionStore;
  readonly messages: MessageStore;
  readonly runs: RunStore;
  readonly artifacts: ArtifactStore;
  readonly usage: UsageStore;
  readonly feedback: FeedbackStore;
  readonly search: SearchStore;
  healthCheck(): Promise<StorageHealth>;
}

/**
 * Everything a procedure may touch. Handlers get services only from here (never from module
 * singletons), so a test builds a context around memory storage and calls the router directly.
 */
export interface ApiServices {
  storage: ApiStorage;
  /** The agent runtime (`RunManager` satisfies it): sends, aborts, event streams. */
  runs: RunService;
  /** The session model (the runtime's `SessionService` satisfies it): every session write. */
  sessions: SessionLifecycle;
  /** The context-window view (`sessions.context`). */
  context: ContextViewService;
  /** The server workspace's skills (`skills.list`); the runtime's `SkillLibrary` satisfies it. */
  skills: SkillCatalog;
  /** The configuration registry: agents and providers (`agents.*`, `providers.*`). */
  registry: RegistryApi;
  /** Cron and delayed-run schedules (`schedules.*`); absent: those procedures answer UNAVAILABLE. */
  schedules?: ScheduleApi;
  /**
   * Releases a deleted session's sandbox. Optional: without it only the runtime's own release
   * (inside `runs.forgetSession`) happens.
   */
  sandbox?: SandboxReleaser;
  /** Breakers outside the runtime (storage, sandbox...); `health.get` merges the runtime's. */
  breakers: { snapshots(): BreakerSnapshot[] };
  /** The server's version string, reported by `health.get`. */
  version: string;
  /** Several nodes (`COGNITION_REDIS_URL`): this node's id and its Redis, for `health.get`. */
  cluster?: ClusterHealthSource;
  /** Per-tenant budgets (`COGNITION_RATE_LIMIT_*`); absent: no limits. */
  rateLimiter?: RateLimiter;
}

/**
 * The skills of the server's workspace (`.cognition/skills`), shared by every tenant like the
 * agents are: valid ones and the SKILL.md files that were skipped.
 */
export interface SkillCatalog {
  list(): Promise<SkillList>;
}

/** What `/health` reports of a node of a cluster. */
export interface ClusterHealthSource {
  nodeId: string;
  redis(): Promise<{ status: string; ok: boolean; latencyMs: number | null; error?: string }>;
}

/** The tRPC context of every procedure. */
export interface ApiContext {
  services: ApiServices;
  caller: Caller;
  /** Correlates logs and error reports of one request. */
  requestId: string;
}

export function createApiContext(
  services: ApiServices,
  caller: Caller,
  requestId: string,
): ApiContext {
  return { services, caller, requestId };
}
