import type { ProjectedMessage } from '@cognition/storage';
import { planProjection, projectCheckpointMessages } from '@cognition/storage';
import type { BaseMessage } from '@langchain/core/messages';
import type { PrismaTx } from './db';
import { MESSAGE_ORDER } from './mapping';
import type { Message as MessageRow } from './generated/postgres/client';

/** The columns a projected row owns (everything but id, session_id and created_at). */
type ProjectedColumns = Pick<
  MessageRow,
  | 'seq'
  | 'role'
  | 'content'
  | 'toolCalls'
  | 'toolCallId'
  | 'tokenCount'
  | 'modelUsed'
  | 'parentId'
  | 'metadata'
  | 'source'
>;

function columnsOf(message: ProjectedMessage): ProjectedColumns {
  return {
    seq: message.seq,
    role: message.role,
    content: message.content,
    toolCalls: JSON.stringify(message.toolCalls),
    toolCallId: message.toolCallId,
    tokenCount: message.tokenCount,
    modelUsed: message.modelUsed,
    parentId: message.parentId,
    metadata: JSON.stringify(message.metadata),
    source: 'checkpoint',
  };
}

function sameColumns(row: MessageRow, want: Partial<ProjectedColumns>): boolean {
  return (Object.keys(want) as (keyof ProjectedColumns)[]).every((key) => row[key] === want[key]);
}

/**
 * Locks the row of the session owning `threadId` for the rest of the transaction (a no-op
 * write: on PostgreSQL it queues every other writer of the session, `messages.create` included,
 * behind this transaction) and returns the session id; null when the thread has no session.
 */
export async function lockSessionOfThread(tx: PrismaTx, threadId: string): Promise<string | null> {
  const [session] = await tx.session.updateManyAndReturn({
    where: { threadId },
    data: { messageCount: { increment: 0 } },
    select: { id: true },
  });
  return session?.id ?? null;
}

/**
 * Rewrites the message rows of the session owning `threadId` (if any) to match `messages` (see
 * `checkpointMessages` of `@cognition/storage`) of root checkpoint `checkpointId` (null: the
 * thread has no checkpoint), inside the caller's transaction, so rows and checkpoint commit or
 * roll back together. It locks the session row first ({@link lockSessionOfThread}), so
 * `messages.create` of the same session, which takes that lock before choosing its `seq`, waits
 * for the rewrite instead of racing it for a position.
 */
export async function writeProjectionInTx(
  tx: PrismaTx,
  threadId: string,
  checkpointId: string | null,
  messages: readonly BaseMessage[],
): Promise<void> {
  const sessionId = await lockSessionOfThread(tx, threadId);
  if (sessionId !== null) await projectLockedSession(tx, sessionId, checkpointId, messages);
}

/**
 * The rewrite of {@link writeProjectionInTx} for a session whose row this transaction has
 * already locked. The rows follow `planProjection` of `@cognition/storage`, shared by every
 * backend. After it runs:
 * - one row per checkpoint message, id = LangChain message id, `seq` = position,
 *   `source = 'checkpoint'`; rows that already existed keep their `created_at`, new rows get now;
 * - `source = 'checkpoint'` rows no longer in the checkpoint are deleted;
 * - `source = 'direct'` rows not (yet) in the checkpoint (accepted user input the graph has not
 *   checkpointed) are kept, ordered after the checkpointed ones;
 * - `seq` is dense, `0 … count − 1`, whatever gaps or order the rows had before;
 * - `message_count` = row count and `projected_checkpoint_id` = `checkpointId`; `updated_at`
 *   moves to now when the count changed (the session's messages are its activity);
 * Only rows whose columns differ are written, so a long thread costs one read per step.
 */
export async function projectLockedSession(
  tx: PrismaTx,
  sessionId: string,
  checkpointId: string | null,
  messages: readonly BaseMessage[],
): Promise<void> {
  const existing = await tx.message.findMany({ where: { sessionId }, orderBy: MESSAGE_ORDER });
  const plan = planProjection(
    existing.map((row) => ({ id: row.id, pending: row.source !== 'checkpoint' })),
    projectCheckpointMessages(sessionId, messages),
  );
  const existingById = new Map(existing.map((row) => [row.id, row]));
  const now = new Date();
  const toCreate: (ProjectedColumns & { id: string; sessionId: string; createdAt: Date })[] = [];
  // Deleted rows free their positions before anything moves into them.
  if (plan.deleteIds.length > 0)
    await tx.message.deleteMany({ where: { id: { in: plan.deleteIds } } });
  // Below every current position (a hand-edited row may hold a negative one).
  const floor = Math.min(0, existing[0]?.seq ?? 0);
  let moved = false;
  for (const planned of plan.rows) {
    const id = planned.kind === 'projected' ? planned.message.id : planned.id;
    const row = existingById.get(id);
    const want: Partial<ProjectedColumns> =
      planned.kind === 'projected' ? columnsOf(planned.message) : { seq: planned.seq };
    if (!row) {
      if (planned.kind === 'projected')
        toCreate.push({ id, sessionId, createdAt: now, ...columnsOf(planned.message) });
      continue;
    }
    if (row.seq !== planned.seq) {
      // Parked below the floor at a position unique to its target, so the unique
      // (session_id, seq) index never sees two rows on one position while rows trade places.
      await tx.message.update({ where: { id }, data: { ...want, seq: floor - 1 - planned.seq } });
      moved = true;
    } else if (!sameColumns(row, want)) {
      await tx.message.update({ where: { id }, data: want });
    }
  }
  // Every parked row goes to its target in one statement (floor − 1 − x inverts the parking):
  // the targets are distinct and no row that stayed holds one, so no intermediate state has a
  // duplicate position.
  if (moved)
    await tx.$executeRaw`UPDATE "messages" SET "seq" = ${floor - 1} - "seq" WHERE "session_id" = ${sessionId} AND "seq" < ${floor}`;
  if (toCreate.length > 0) await tx.message.createMany({ data: toCreate });
  await tx.session.update({
    where: { id: sessionId },
    data: {
      messageCount: plan.messageCount,
      projectedCheckpointId: checkpointId,
      // A message added or removed is activity on the session (lists sort by updatedAt).
      ...(plan.messageCount !== existing.length ? { updatedAt: now } : {}),
    },
  });
}
