import type { BaseMessage } from '@langchain/core/messages';
import { coerceMessageLikeToMessage, isBaseMessage } from '@langchain/core/messages';
import type { Checkpoint } from '@langchain/langgraph-checkpoint';
import type { ProjectedMessage } from './projection';

/** The LangGraph state channel whose value is projected into message rows. */
export const MESSAGES_CHANNEL = 'messages';

/** The checkpoint namespace of a thread's root graph: only it is projected (subgraphs are not). */
export const ROOT_CHECKPOINT_NS = '';

/**
 * The messages of a checkpoint, as LangChain messages. A checkpoint without a `messages` array
 * (e.g. the input checkpoint of a brand-new thread) projects to no messages; entries that are not
 * messages and cannot be coerced into one are left out rather than failing the checkpoint write.
 */
export function checkpointMessages(checkpoint: Pick<Checkpoint, 'channel_values'>): BaseMessage[] {
  const value = checkpoint.channel_values[MESSAGES_CHANNEL];
  if (!Array.isArray(value)) return [];
  const messages: BaseMessage[] = [];
  for (const entry of value as unknown[]) {
    if (isBaseMessage(entry)) {
      messages.push(entry);
      continue;
    }
    try {
      messages.push(
        coerceMessageLikeToMessage(entry as Parameters<typeof coerceMessageLikeToMessage>[0]),
      );
    } catch {
      // Not a message: a foreign graph's `messages` channel; nothing to project for it.
    }
  }
  return messages;
}

/**
 * True when `candidateId` becomes the thread's latest checkpoint given the current latest id.
 * LangGraph checkpoint ids are uuid6 strings that sort by creation time, and every saver returns
 * the lexicographically greatest id as the latest; the projection follows the same rule so a late
 * write of an older checkpoint never overwrites the projection of a newer one.
 */
export function isLatestCheckpointId(candidateId: string, currentLatestId: string | null): boolean {
  return currentLatestId === null || candidateId >= currentLatestId;
}

/** What a backend knows about an existing message row when re-projecting. */
export interface ExistingMessageRow {
  id: string;
  /** true for a row written by MessageStore.create that no checkpoint has included yet. */
  pending: boolean;
}

/** One row of the projected thread, in thread order (`seq` = index). */
export type PlannedRow =
  | { kind: 'projected'; seq: number; message: ProjectedMessage; existed: boolean }
  | { kind: 'pending'; seq: number; id: string };

export interface ProjectionPlan {
  /** Every row the session keeps, in thread order; `seq` is the row's new position. */
  rows: PlannedRow[];
  /** Rows to delete: previously projected rows the checkpoint no longer contains. */
  deleteIds: string[];
  /** The session's messageCount after the plan is applied (= offset + rows.length). */
  messageCount: number;
}

/**
 * Plans how a session's rows become the projection of a checkpoint. Shared by every backend so
 * all project identically (with `offset`, for the rows from position `offset` on, when the rows
 * before it already are the projection of the checkpoint's first `offset` messages: `existing`
 * and `projected` then start there too):
 * - each checkpoint message becomes a row at its checkpoint position; a row with the same id
 *   (including a pending input) is updated in place, keeping its `createdAt`;
 * - pending inputs the checkpoint does not contain yet are kept, after the projected rows, in
 *   their current order;
 * - previously projected rows the checkpoint no longer contains (e.g. removed by a
 *   RemoveMessage) are deleted.
 * `existing` must be in thread order.
 */
export function planProjection(
  existing: readonly ExistingMessageRow[],
  projected: readonly ProjectedMessage[],
  offset = 0,
): ProjectionPlan {
  const existingIds = new Set(existing.map((row) => row.id));
  const projectedIds = new Set(projected.map((message) => message.id));
  const rows: PlannedRow[] = projected.map((message, index) => ({
    kind: 'projected',
    seq: offset + index,
    message: { ...message, seq: offset + index },
    existed: existingIds.has(message.id),
  }));
  const deleteIds: string[] = [];
  for (const row of existing) {
    if (projectedIds.has(row.id)) continue;
    if (row.pending) rows.push({ kind: 'pending', seq: offset + rows.length, id: row.id });
    else deleteIds.push(row.id);
  }
  return { rows, deleteIds, messageCount: offset + rows.length };
}
