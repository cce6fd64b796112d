import type { RunManager } from '@cognition/runtime';
import { SessionService } from '@cognition/runtime';
import type { StorageBackend } from '@cognition/storage';
import type { Logger } from 'pino';
import type { SessionLifecycleConfig } from '../config';

/** Sessions deleted per sweep step: bounded, so one step never holds the database for long. */
const SWEEP_BATCH = 100;

export interface SessionLifecycle {
  service: SessionService;
  /** Sweeps now (until nothing expired is left); returns how many sessions were deleted. */
  sweep(): Promise<number>;
  /**
   * Applies checkpoint retention to the sessions active since the previous pass (every session
   * on the first); returns how many checkpoints were deleted.
   */
  prune(): Promise<number>;
  /** Stops the periodic sweep. */
  stop(): void;
}

/**
 * The session model of the server: the storage's read-time rules (abandoned threshold, TTL),
 * the `SessionService` (pipeline, actions, events) and, when a TTL is set, the periodic sweep.
 * Each sweep step deletes at most {@link SWEEP_BATCH} expired sessions (several nodes may sweep
 * one database: each session is deleted once), cancelling their runs and releasing their
 * sandboxes first.
 */
export function createSessionLifecycle(deps: {
  config: SessionLifecycleConfig;
  storage: StorageBackend;
  runs: RunManager;
  workspaceRoot: string;
  release?: (sessionId: string) => Promise<void>;
  logger: Logger;
}): SessionLifecycle {
  const { config, storage, runs, logger } = deps;
  storage.setSessionPolicy({
    abandonAfterSeconds: config.abandonAfterSeconds,
    ttlSeconds: config.ttlSeconds,
  });
  const service = new SessionService({
    storage,
    runs,
    logger: logger.child({ component: 'sessions' }),
    workspaceRoot: deps.workspaceRoot,
    checkpointRetention: config.checkpointRetention,
  });
  // A run's outcome moves the session between active and error through the pipeline too.
  runs.useSessionStatusWriter((id, scope, status, runId) =>
    service.applyRunOutcome(id, scope, status, runId),
  );
  let running: Promise<number> | null = null;
  const sweep = (): Promise<number> => {
    running ??= (async () => {
      let total = 0;
      try {
        for (;;) {
          const deleted = await storage.sessions.sweepExpired(SWEEP_BATCH);
          for (const id of deleted) {
            await runs.forgetSession(id);
            await deps.release?.(id);
          }
          total += deleted.length;
          if (deleted.length < SWEEP_BATCH) break;
        }
        if (total > 0) logger.info({ deleted: total }, `Deleted ${total} expired session(s)`);
      } catch (error) {
        logger.warn({ err: error }, 'session TTL sweep failed; retrying at the next interval');
      } finally {
        running = null;
      }
      return total;
    })();
    return running;
  };
  let prunedUpTo = 0;
  let pruning: Promise<number> | null = null;
  const prune = (): Promise<number> => {
    pruning ??= (async () => {
      let total = 0;
      const startedAt = Date.now();
      try {
        for (let offset = 0; ; offset += SWEEP_BATCH) {
          const page = await storage.sessions.list(
            { sort: 'updated_at', order: 'desc', limit: SWEEP_BATCH, offset },
            {},
          );
          const recent = page.sessions.filter((s) => s.updatedAt.getTime() >= prunedUpTo);
          for (const session of recent) total += await service.pruneCheckpoints(session.id);
          if (recent.length < page.sessions.length || page.sessions.length < SWEEP_BATCH) break;
        }
        // A little overlap: a session touched while this pass ran is looked at again next time.
        prunedUpTo = startedAt - 1000;
        if (total > 0) logger.info({ deleted: total }, `Pruned ${total} checkpoint(s)`);
      } catch (error) {
        logger.warn({ err: error }, 'checkpoint pruning failed; retrying at the next interval');
      } finally {
        pruning = null;
      }
      return total;
    })();
    return pruning;
  };
  // Without a TTL only sessions with their own expiresAt expire: still swept, same interval.
  // Retention runs on the same clock (sessions may carry their own policy even when the
  // server's is `all`).
  const timer = setInterval(() => {
    void sweep().then(() => prune());
  }, config.sweepIntervalMs);
  timer.unref();
  return { service, sweep, prune, stop: () => clearInterval(timer) };
}
