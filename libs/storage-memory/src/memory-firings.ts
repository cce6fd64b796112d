import type { AdmittedFiring, FiringAdmission } from '@cognition/storage';
import { StorageError } from '@cognition/storage';
import type { MemoryMessages } from './memory-messages';
import type { MemoryState } from './memory-state';
import type { MemoryRuns } from './runs/memory-runs';
import type { MemorySessions } from './sessions/memory-sessions';

/** The stores `admitFirings` writes through (their synchronous methods). */
export interface FiringRows {
  state: MemoryState;
  sessions: MemorySessions;
  runs: MemoryRuns;
  messages: MemoryMessages;
}

/**
 * `ScheduleStore.admitFirings` on the memory backend: checked first (a firing whose session
 * exists is left out; a run id in use refuses the batch), then written synchronously to its
 * end, so no other caller sees part of it and a refused batch stores nothing.
 */
export function admitFiringsInMemory(
  rows: FiringRows,
  firings: FiringAdmission[],
  recordRun: (f: FiringAdmission) => void,
): AdmittedFiring[] {
  const fresh = firings.filter((f) => !rows.state.sessions.has(f.session.id));
  const runIds = new Set<string>();
  const sessionIds = new Set<string>();
  for (const f of fresh) {
    if (rows.state.runs.has(f.run.id) || runIds.has(f.run.id)) {
      throw new StorageError('CONFLICT', `Run already exists: ${f.run.id}`);
    }
    if (sessionIds.has(f.session.id)) {
      throw new StorageError('CONFLICT', `Session ${f.session.id} twice in one batch`);
    }
    runIds.add(f.run.id);
    sessionIds.add(f.session.id);
  }
  return fresh.map((f) => {
    const created = rows.sessions.create(
      {
        id: f.session.id,
        agentName: f.session.agentName,
        config: f.session.config,
        metadata: f.session.metadata,
      },
      f.scope,
    );
    const pendingInput = {
      messageId: f.run.messageId,
      content: f.message.content,
      parentId: null,
      metadata: f.message.metadata,
    };
    const { run } = rows.runs.create({
      id: f.run.id,
      sessionId: created.id,
      status: 'queued',
      inputMessageId: f.run.messageId,
      idempotencyKey: f.run.idempotencyKey,
      callbackUrl: f.run.callbackUrl,
      pendingInput,
      ownerNode: f.run.ownerNode,
      leaseExpiresAt: f.run.leaseExpiresAt,
    });
    const message = rows.messages.create({
      id: f.run.messageId,
      sessionId: created.id,
      role: 'user',
      content: f.message.content,
      parentId: null,
      metadata: f.message.metadata,
    });
    recordRun(f);
    const session = rows.sessions.get(created.id, {}) ?? created;
    return { scheduleId: f.scheduleId, dueAt: f.dueAt, session, run, message };
  });
}
