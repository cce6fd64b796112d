import type { RollbackResult } from '@cognition/storage';
import { StorageError } from '@cognition/storage';
import type { PrismaDb } from '../db/db';

/**
 * `StorageBackend.rollbackRun`: one transaction removes the run, its user message and every
 * message after it, and the checkpoints its thread gained since the run started. The session
 * row is updated first, so it is locked for the rest of the transaction: a projection write
 * (which locks it too) cannot interleave. Checkpoint ids are time-ordered (uuid6), so "gained
 * since the run started" is `checkpoint_id > base`; a run that never started gained none.
 */
export async function rollbackRun(db: PrismaDb, runId: string): Promise<RollbackResult> {
  return db.$transaction(async (tx) => {
    const run = await tx.run.findUnique({
      where: { id: runId },
      select: { sessionId: true, inputMessageId: true, baseCheckpointId: true, startedAt: true },
    });
    if (!run) throw new StorageError('RUN_NOT_FOUND', `Run not found: ${runId}`);
    const input = run.inputMessageId
      ? await tx.message.findUnique({
          where: { sessionId_id: { sessionId: run.sessionId, id: run.inputMessageId } },
          select: { seq: true },
        })
      : null;
    const session = await tx.session.update({
      where: { id: run.sessionId },
      data: { updatedAt: new Date() },
      select: { threadId: true, messageCount: true },
    });
    const messages = input
      ? (
          await tx.message.deleteMany({
            where: { sessionId: run.sessionId, seq: { gte: input.seq } },
          })
        ).count
      : 0;
    let checkpoints = 0;
    if (run.startedAt !== null) {
      const after =
        run.baseCheckpointId === null ? {} : { checkpointId: { gt: run.baseCheckpointId } };
      await tx.checkpointWrite.deleteMany({ where: { threadId: session.threadId, ...after } });
      checkpoints = (
        await tx.checkpoint.deleteMany({ where: { threadId: session.threadId, ...after } })
      ).count;
    }
    await tx.run.delete({ where: { id: runId } });
    await tx.session.update({
      where: { id: run.sessionId },
      data: {
        messageCount: session.messageCount - messages,
        ...(run.startedAt !== null ? { projectedCheckpointId: run.baseCheckpointId } : {}),
      },
    });
    return { messages, checkpoints };
  });
}
