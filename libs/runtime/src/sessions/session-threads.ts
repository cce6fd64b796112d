import type { Session } from '@cognition/contracts';
import type { Scope, StorageBackend } from '@cognition/storage';
import {
  checkpointWithMessage,
  parseRetention,
  pruneThread,
  rootCheckpoint,
} from '@cognition/storage';
import type { CheckpointTuple } from '@langchain/langgraph-checkpoint';
import { RuntimeError } from '../errors';

/** A point of the thread: a checkpoint id or a message id (exactly one). */
export interface ThreadPoint {
  checkpointId?: string | undefined;
  messageId?: string | undefined;
}

/** Checkpoints deleted per retention step. */
const PRUNE_BATCH = 500;

/**
 * What the time-travel actions need of a session's thread: finding a point, refusing while a
 * run writes the thread, and checkpoint retention.
 */
export class SessionThreads {
  constructor(
    private readonly storage: StorageBackend,
    /** The server's retention (`COGNITION_CHECKPOINT_RETENTION`); a session's own wins. */
    private readonly defaultRetention = 'all',
  ) {}

  retentionOf(session: Session): string {
    return session.checkpointRetention ?? this.defaultRetention;
  }

  /**
   * Applies the session's checkpoint retention (its own, else the server's) to its thread, in
   * bounded batches; returns how many checkpoints were deleted. A session with an active run is
   * skipped (its run is writing the thread). Never deletes the head or a message row.
   */
  async prune(sessionId: string): Promise<number> {
    const session = await this.storage.sessions.get(sessionId, {});
    if (!session) return 0;
    const policy = parseRetention(this.retentionOf(session));
    if (!policy || policy.kind === 'all') return 0;
    if (await this.storage.runs.getActive(session.id)) return 0;
    let total = 0;
    for (;;) {
      const deleted = await pruneThread(this.storage.checkpoints, session.threadId, policy, {
        batch: PRUNE_BATCH,
      });
      total += deleted;
      if (deleted < PRUNE_BATCH) return total;
    }
  }

  /** RUN_IN_PROGRESS while the session has an active run. */
  async requireIdle(session: Session): Promise<void> {
    const active = await this.storage.runs.getActive(session.id);
    if (active) {
      throw new RuntimeError(
        'RUN_IN_PROGRESS',
        `A run is in progress on session ${session.id}: wait for its terminal event or abort it`,
      );
    }
  }

  /**
   * The checkpoint of `point`: unknown checkpoint → NOT_FOUND; a message not in the session →
   * MESSAGE_NOT_FOUND; a message of the session no kept checkpoint holds (pruned by retention,
   * or not checkpointed yet) → CONFLICT.
   */
  async resolvePoint(session: Session, point: ThreadPoint, scope: Scope): Promise<CheckpointTuple> {
    const { checkpointer } = this.storage;
    if ((point.checkpointId === undefined) === (point.messageId === undefined)) {
      throw RuntimeError.field('checkpointId', 'give exactly one of checkpointId and messageId');
    }
    if (point.checkpointId !== undefined) {
      const tuple = await rootCheckpoint(checkpointer, session.threadId, point.checkpointId);
      if (!tuple) {
        const kept = await this.storage.checkpoints.list(session.threadId);
        const oldest = kept[kept.length - 1]?.checkpointId;
        if (
          this.retentionOf(session) !== 'all' &&
          oldest !== undefined &&
          point.checkpointId < oldest
        ) {
          throw new RuntimeError(
            'CONFLICT',
            `Checkpoint ${point.checkpointId} of session ${session.id} was pruned by checkpoint retention (${this.retentionOf(session)}); the oldest kept is ${oldest}`,
          );
        }
        throw new RuntimeError(
          'NOT_FOUND',
          `Checkpoint not found in session ${session.id}: ${point.checkpointId} (unknown, or pruned by checkpoint retention)`,
        );
      }
      return tuple;
    }
    const messageId = point.messageId as string;
    const tuple = await checkpointWithMessage(checkpointer, session.threadId, messageId);
    if (tuple) return tuple;
    if (!(await this.storage.messages.get(session.id, messageId, scope))) {
      throw new RuntimeError(
        'MESSAGE_NOT_FOUND',
        `Message not found in session ${session.id}: ${messageId}`,
      );
    }
    throw new RuntimeError(
      'CONFLICT',
      `No kept checkpoint of session ${session.id} holds message ${messageId} (pruned by checkpoint retention, or not checkpointed yet)`,
    );
  }
}
