import type { StorageBackend } from '@cognition/storage';
import type { Logger } from '../logger';
import type { UserGraphs } from '../user-graphs/user-graphs';
import type { RunManager } from '../runs/run-manager';
import type { ScheduleObserver } from './schedule-observer';
import { ScheduleRunner } from './schedule-runner';
import type { ScheduleRunnerOptions } from './schedule-runner';
import { ScheduleService } from './schedule-service';
import type { Clock } from './schedule-times';

export interface SchedulingOptions extends Pick<
  ScheduleRunnerOptions,
  'pollMs' | 'misfireGraceMs' | 'claimTimeoutMs' | 'batch' | 'lookAheadMs'
> {
  storage: StorageBackend;
  runs: Pick<RunManager, 'scheduler' | 'validateSessionInput' | 'forgetSession'>;
  nodeId: string;
  logger: Logger;
  /** Whether completion callbacks may target loopback/private addresses. */
  allowPrivateCallbacks: boolean;
  /** Releases a deleted session's sandbox (the server's); the runtime's own release happens anyway. */
  releaseSandbox?: (sessionId: string) => Promise<void>;
  clock?: Clock;
  observer?: ScheduleObserver;
  /** The graphs of `langgraph.json` a schedule's `target.graph` may name (none: refused). */
  graphs?: Pick<UserGraphs, 'get'>;
}

/**
 * The scheduler loop and the API's service of one node, on one runtime. The caller starts the
 * loop (`runner.start()`) once recovery is done, and stops it before the runtime shuts down.
 */
export function createScheduling(o: SchedulingOptions): {
  runner: ScheduleRunner;
  service: ScheduleService;
} {
  const runner = new ScheduleRunner({
    storage: o.storage,
    send: (input, options) => o.runs.scheduler.send(input, options),
    sendGraph: (input) => o.runs.scheduler.sendGraph(input),
    admitFirings: (firings) => o.runs.scheduler.admitFirings(firings),
    // As the API deletes a session: cancel its run, release its sandbox, then the rows.
    deleteSession: async (sessionId) => {
      await o.runs.forgetSession(sessionId);
      await o.releaseSandbox?.(sessionId);
      await o.storage.sessions.delete(sessionId, {});
    },
    nodeId: o.nodeId,
    logger: o.logger,
    ...(o.clock ? { clock: o.clock } : {}),
    ...(o.observer ? { observer: o.observer } : {}),
    ...(o.pollMs !== undefined ? { pollMs: o.pollMs } : {}),
    ...(o.misfireGraceMs !== undefined ? { misfireGraceMs: o.misfireGraceMs } : {}),
    ...(o.claimTimeoutMs !== undefined ? { claimTimeoutMs: o.claimTimeoutMs } : {}),
    ...(o.batch !== undefined ? { batch: o.batch } : {}),
    ...(o.lookAheadMs !== undefined ? { lookAheadMs: o.lookAheadMs } : {}),
  });
  const service = new ScheduleService({
    storage: o.storage,
    runner,
    validateSessionInput: (input) => o.runs.validateSessionInput(input),
    allowPrivateCallbacks: o.allowPrivateCallbacks,
    hasGraph: (graphId) => o.graphs?.get(graphId) !== undefined,
    ...(o.clock ? { clock: o.clock } : {}),
  });
  return { runner, service };
}
