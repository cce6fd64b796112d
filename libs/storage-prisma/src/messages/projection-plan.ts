import type { ProjectedMessage } from '@cognition/storage';
import { planProjection, projectCheckpointMessages, ROOT_CHECKPOINT_NS } from '@cognition/storage';
import type { BaseMessage } from '@langchain/core/messages';

/*
 * What the message projection computes before it writes (the same on both databases): the rows
 * a checkpoint's messages become, the writes that turn the stored rows into them, and the one
 * statement that reads the latest checkpoint id with the rows.
 */

/** A message row as the projection reads it: the columns it owns, raw, plus id and source. */
interface StoredRow {
  id: string;
  seq: number;
  source: string;
  role: string;
  content: string;
  tool_calls: string;
  tool_call_id: string | null;
  token_count: number | null;
  model_used: string | null;
  parent_id: string | null;
  metadata: string;
}

/** What a projected row's columns are (`source` is always `'checkpoint'`). */
export type ProjectedRow = Omit<StoredRow, 'source'>;

const COMPARED: readonly (keyof ProjectedRow)[] = [
  'role',
  'content',
  'tool_calls',
  'tool_call_id',
  'token_count',
  'model_used',
  'parent_id',
  'metadata',
];

function projectedRow(message: ProjectedMessage): ProjectedRow {
  return {
    id: message.id,
    seq: message.seq,
    role: message.role,
    content: message.content,
    tool_calls: JSON.stringify(message.toolCalls),
    tool_call_id: message.toolCallId,
    token_count: message.tokenCount,
    model_used: message.modelUsed,
    parent_id: message.parentId,
    metadata: JSON.stringify(message.metadata),
  };
}

/** The writes that turn a session's rows into a projection; computed by {@link planWrites}. */
interface ProjectionWrites {
  deleteIds: string[];
  /** Projected rows that exist but differ: every owned column is written, `source` included. */
  rewrites: ProjectedRow[];
  /** Pending rows that only change position. */
  moves: { id: string; seq: number }[];
  /**
   * Set when rows change position: the moving rows (in `rewrites` and `moves`) carry a parking
   * position `parkedBelow − 1 − target`, below every current one, and a final statement moves
   * every row below `parkedBelow` to `parkedBelow − 1 − seq`.
   */
  parkedBelow: number | null;
  creates: ProjectedRow[];
  messageCount: number;
  /** The row count changes: a message added or removed is activity (`updated_at` moves). */
  countChanged: boolean;
}

/**
 * The writes that make `existing` (the session's rows in `seq` order from position `from` on)
 * the projection of `messages` (from message `from` on: the rows before it already are the
 * projection of the messages before it), following `planProjection` of `@cognition/storage`
 * (shared by every backend). Only rows whose columns or position differ are written. `lowest`
 * is the session's lowest `seq` (a hand-edited row may hold a negative one), null without rows.
 */
export function planWrites(
  sessionId: string,
  existing: readonly StoredRow[],
  messages: readonly BaseMessage[],
  from: number,
  lowest: number | null,
): ProjectionWrites {
  const plan = planProjection(
    existing.map((row) => ({ id: row.id, pending: row.source !== 'checkpoint' })),
    projectCheckpointMessages(sessionId, messages, from),
    from,
  );
  const byId = new Map(existing.map((row) => [row.id, row]));
  // Below every current position.
  const floor = Math.min(0, lowest ?? 0);
  const writes: ProjectionWrites = {
    deleteIds: plan.deleteIds,
    rewrites: [],
    moves: [],
    parkedBelow: null,
    creates: [],
    messageCount: plan.messageCount,
    countChanged: plan.messageCount !== from + existing.length,
  };
  for (const planned of plan.rows) {
    const id = planned.kind === 'projected' ? planned.message.id : planned.id;
    const row = byId.get(id);
    const moved = row !== undefined && row.seq !== planned.seq;
    // Parked at a position unique to its target, so the unique (session_id, seq) index never
    // sees two rows on one position while rows trade places.
    const seq = moved ? floor - 1 - planned.seq : planned.seq;
    if (moved) writes.parkedBelow = floor;
    if (planned.kind === 'pending') {
      if (moved) writes.moves.push({ id, seq });
      continue;
    }
    const want = projectedRow(planned.message);
    if (!row) writes.creates.push(want);
    else if (moved || row.source !== 'checkpoint' || COMPARED.some((key) => row[key] !== want[key]))
      writes.rewrites.push({ ...want, seq });
  }
  return writes;
}

/**
 * Decides, once the session row is locked, from the thread's latest root checkpoint id, whether
 * the projection is written: false leaves the rows alone; throwing rolls the transaction back.
 */
export type ProjectionGate = (latestCheckpointId: string | null) => boolean;

/** Writes every time. */
export const ALWAYS: ProjectionGate = () => true;

/**
 * What to project: `messages` (see `checkpointMessages` of `@cognition/storage`) of root
 * checkpoint `checkpointId` (null: the thread has no checkpoint) onto the session owning
 * `threadId`, if `gate` agrees.
 *
 * The projection first locks the session row (on PostgreSQL a `FOR NO KEY UPDATE` lock, the one
 * an UPDATE takes: `messages.create` of the same session, which updates that row before choosing
 * its `seq`, waits for the rewrite instead of racing it for a position; on SQLite a no-op UPDATE,
 * which takes the database's write lock, so the reads after it are current even against another
 * process on the file), then reads the latest root checkpoint id of the thread and asks `gate`.
 * After it runs:
 * - one row per checkpoint message, id = LangChain message id, `seq` = position,
 *   `source = 'checkpoint'`; rows that already existed keep their `created_at`, new rows get now;
 * - `source = 'checkpoint'` rows no longer in the checkpoint are deleted;
 * - `source = 'direct'` rows not (yet) in the checkpoint (accepted user input the graph has not
 *   checkpointed) are kept, ordered after the checkpointed ones;
 * - `seq` is dense, `0 … count − 1`, whatever gaps or order the rows had before;
 * - `message_count` = row count and `projected_checkpoint_id` = `checkpointId`; `updated_at`
 *   moves to now when the count changed (the session's messages are its activity).
 * Only rows whose columns or position differ are written. It runs inside the caller's
 * transaction, so rows and checkpoint commit or roll back together, and returns the session's
 * message count, or null when the thread has no session or `gate` declined.
 */
export interface ProjectionRequest {
  threadId: string;
  checkpointId: string | null;
  messages: readonly BaseMessage[];
  gate: ProjectionGate;
  /**
   * The first `kept` of `messages` are those of checkpoint `checkpointId`: when the session's
   * rows are that checkpoint's projection (`projected_checkpoint_id`), only the rows from
   * position `kept` on are read and written, so a step costs what it changed, not the length
   * of the thread. Otherwise, or without it, every row is.
   */
  base?: { checkpointId: string; kept: number };
}

const STORED_COLUMNS = `m.id, m.seq, m.source, m.role, m.content, m.tool_calls, m.tool_call_id,
  m.token_count, m.model_used, m.parent_id, m.metadata`;

/**
 * The latest root checkpoint id, the session's lowest `seq` and its rows from position `from`
 * on, in one statement (the `(session_id, seq)` index serves both the minimum and the range).
 */
export function latestAndRowsSql(thread: string, session: string, from: string): string {
  return `SELECT l.latest, f.lowest, ${STORED_COLUMNS}
    FROM (SELECT max(checkpoint_id) AS latest FROM checkpoints
      WHERE thread_id = ${thread} AND checkpoint_ns = '${ROOT_CHECKPOINT_NS}') l
    CROSS JOIN (SELECT min(seq) AS lowest FROM messages WHERE session_id = ${session}) f
    LEFT JOIN messages m ON m.session_id = ${session} AND m.seq >= ${from}
    ORDER BY m.seq`;
}

/** A row of {@link latestAndRowsSql}: the message columns are all null when there is none. */
export type LatestAndRow = { latest: string | null; lowest: number | null } & (
  StoredRow | { [K in keyof StoredRow]: null }
);

export function splitLatestAndRows(result: LatestAndRow[]): {
  latest: string | null;
  lowest: number | null;
  rows: StoredRow[];
} {
  const rows: StoredRow[] = [];
  for (const { latest: _, lowest: __, ...row } of result) if (row.id !== null) rows.push(row);
  return { latest: result[0]?.latest ?? null, lowest: result[0]?.lowest ?? null, rows };
}

/** The session row as the projection's lock returns it. */
export interface LockedSession {
  id: string;
  projected_checkpoint_id: string | null;
}

/** The lowest `seq` a row can hold (the column is a 32-bit integer). */
export const LOWEST_SEQ = -2147483648;

/**
 * The first message to project and the lowest row position to read: after the base's messages
 * when the rows are its projection, else every row (hand-edited ones may hold negative positions).
 */
export function firstPosition(
  session: LockedSession,
  request: ProjectionRequest,
): { from: number; readFrom: number } {
  const base = request.base;
  return base && session.projected_checkpoint_id === base.checkpointId
    ? { from: base.kept, readFrom: base.kept }
    : { from: 0, readFrom: LOWEST_SEQ };
}
