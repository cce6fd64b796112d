import type { StorageHealth } from '@cognition/storage';
import type { ApiContext, BreakerSnapshot } from '../../context';
import type { RunAdmission } from '../../services/run-service';

/**
 * Service health. `degraded` when storage (or, with several nodes, Redis) does not answer or
 * any circuit breaker is OPEN.
 * `activeSessions` counts `active` sessions within the caller's scope; null when storage
 * could not be asked.
 */
export interface HealthReport {
  status: 'healthy' | 'degraded';
  version: string;
  activeSessions: number | null;
  /** This process's run admission: executing, queued (waiting for a slot) and the limit. */
  runs: RunAdmission;
  storage: StorageHealth;
  circuitBreakers: BreakerSnapshot[];
  /**
   * This node: its id and the runs it executes, and (several nodes) its Redis. `id` and
   * `redis` are null on a single node.
   */
  node: {
    id: string | null;
    ownedRuns: string[];
    redis: { status: string; ok: boolean; latencyMs: number | null; error?: string } | null;
  };
}

/** Latencies to 0.1 ms: what a person reads, not `0.41708399999999415` (issue 32). */
function roundMs<T extends number | null>(ms: T): T {
  return (ms === null ? ms : Math.round(ms * 10) / 10) as T;
}

function messageOf(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}

async function checkStorage(ctx: ApiContext): Promise<StorageHealth> {
  const { storage } = ctx.services;
  const started = Date.now();
  try {
    return await storage.healthCheck();
  } catch (error) {
    // A health check that throws is itself the answer: storage is down.
    return {
      backend: storage.kind,
      ok: false,
      latencyMs: Date.now() - started,
      error: messageOf(error),
    };
  }
}

async function countActiveSessions(ctx: ApiContext): Promise<number | null> {
  try {
    const page = await ctx.services.storage.sessions.list(
      { status: 'active', limit: 1 },
      ctx.caller.scope,
    );
    return page.total;
  } catch {
    return null;
  }
}

/** The runtime's breakers and the others; one entry per name (a shared registry reports once). */
function mergeBreakers(...lists: BreakerSnapshot[][]): BreakerSnapshot[] {
  const byName = new Map<string, BreakerSnapshot>();
  for (const snapshot of lists.flat()) {
    if (!byName.has(snapshot.name)) byName.set(snapshot.name, snapshot);
  }
  return [...byName.values()];
}

export async function healthHandler({ ctx }: { ctx: ApiContext }): Promise<HealthReport> {
  const checked = await checkStorage(ctx);
  const storage = { ...checked, latencyMs: roundMs(checked.latencyMs) };
  const activeSessions = storage.ok ? await countActiveSessions(ctx) : null;
  const circuitBreakers = mergeBreakers(
    ctx.services.runs.breakerSnapshots(),
    ctx.services.breakers.snapshots(),
  );
  const cluster = ctx.services.cluster;
  const pinged = cluster ? await cluster.redis() : null;
  const redis = pinged && { ...pinged, latencyMs: roundMs(pinged.latencyMs) };
  const healthy =
    storage.ok &&
    activeSessions !== null &&
    (redis === null || redis.ok) &&
    circuitBreakers.every((b) => b.state !== 'OPEN');
  return {
    status: healthy ? 'healthy' : 'degraded',
    version: ctx.services.version,
    activeSessions,
    runs: ctx.services.runs.admission(),
    storage,
    circuitBreakers,
    node: {
      id: cluster?.nodeId ?? null,
      ownedRuns: ctx.services.runs.activeRunIds(),
      redis,
    },
  };
}

/** Readiness: true once storage answers its health check. */
export async function readyHandler({ ctx }: { ctx: ApiContext }): Promise<{ ready: boolean }> {
  const storage = await checkStorage(ctx);
  return { ready: storage.ok };
}
