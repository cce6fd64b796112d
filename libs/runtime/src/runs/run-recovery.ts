import type { Run } from '@cognition/contracts';
import { isTerminalEvent } from '@cognition/contracts';
import type { StorageBackend } from '@cognition/storage';
import type { EventLog } from '../events/event-log';
import { EVENT_SEQ_WIDTH, seqOfEventId } from '../ids';
import type { Logger } from '../logger';
import { RunEmitter } from './run-emitter';

export const STOPPED_MESSAGE = 'The server stopped while the run was active';

/**
 * At startup: marks runs that storage lists as active but no process executes any more (the
 * previous process died) `interrupted`, and gives each its terminal `error` event. `isLocal`
 * excludes runs this process already executes. Only valid where no other live node shares the
 * database (storage does not record which node owns a run).
 */
export async function interruptOrphanedRuns(
  storage: StorageBackend,
  log: EventLog,
  logger: Logger,
  isLocal: (runId: string) => boolean,
): Promise<Run[]> {
  const recovered: Run[] = [];
  for (const run of await storage.runs.listActive()) {
    if (isLocal(run.id)) continue;
    const updated = await storage.runs.update(run.id, {
      status: 'interrupted',
      error: { code: 'UNAVAILABLE', message: STOPPED_MESSAGE },
      finishedAt: new Date(),
    });
    const { events } = await log.readAfter(run.sessionId, `${run.id}:`);
    const own = events.filter((e) => e.runId === run.id);
    if (!own.some((e) => isTerminalEvent(e.event))) {
      const lastId = own[own.length - 1]?.id;
      // Nothing of the run survived (in-memory log): take the highest sequence number so the
      // event sorts after anything a client may have seen before the restart.
      const startSeq = lastId ? (seqOfEventId(lastId) ?? 0) : 10 ** EVENT_SEQ_WIDTH - 2;
      const emitter = new RunEmitter(log, run.sessionId, run.id, logger, startSeq);
      emitter.emit({ type: 'error', code: 'UNAVAILABLE', message: STOPPED_MESSAGE });
      await emitter.flush();
    }
    recovered.push(updated);
  }
  return recovered;
}
