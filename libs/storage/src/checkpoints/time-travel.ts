import type { ThreadCheckpoint, ThreadHistoryPage } from '@cognition/contracts';
import type { BaseMessage } from '@langchain/core/messages';
import type {
  BaseCheckpointSaver,
  Checkpoint,
  CheckpointTuple,
} from '@langchain/langgraph-checkpoint';
import { uuid6 } from '@langchain/langgraph-checkpoint';
import { checkpointMessages, ROOT_CHECKPOINT_NS } from './projection-sync';

/*
 * Time travel over any backend's checkpointer (seed 001): a thread's history, finding a point in
 * it, and writing a copy of a checkpoint as the new head of a thread (rewind: the same thread;
 * fork: another thread). Only the port's `BaseCheckpointSaver` API is used, so every backend
 * behaves the same, and each copy is projected into message rows by the backend's own `put`.
 */

/** Characters of `lastMessagePreview`. */
const PREVIEW_CHARS = 200;

function rootConfig(threadId: string, checkpointId?: string) {
  return {
    configurable: {
      thread_id: threadId,
      checkpoint_ns: ROOT_CHECKPOINT_NS,
      ...(checkpointId !== undefined ? { checkpoint_id: checkpointId } : {}),
    },
  };
}

function textOf(message: BaseMessage): string {
  const content: unknown = message.content;
  if (typeof content === 'string') return content;
  if (!Array.isArray(content)) return '';
  return content
    .map((part: unknown) =>
      typeof part === 'string'
        ? part
        : (part as { type?: unknown }).type === 'text' &&
            typeof (part as { text?: unknown }).text === 'string'
          ? (part as { text: string }).text
          : '',
    )
    .join('');
}

/** The history entry of one checkpoint tuple. */
export function describeCheckpoint(tuple: CheckpointTuple): ThreadCheckpoint {
  const messages = checkpointMessages(tuple.checkpoint);
  const last = messages[messages.length - 1];
  const step = (tuple.metadata as { step?: unknown } | undefined)?.step;
  const parent = tuple.parentConfig?.configurable?.['checkpoint_id'] as string | undefined;
  return {
    checkpointId: tuple.checkpoint.id,
    parentCheckpointId: parent ?? null,
    step: typeof step === 'number' ? step : -1,
    createdAt: new Date(tuple.checkpoint.ts),
    messageCount: messages.length,
    lastMessagePreview: last ? textOf(last).slice(0, PREVIEW_CHARS) : null,
  };
}

/** The thread's root checkpoints, newest first (greatest id first), paged by offset. */
export async function threadHistory(
  checkpointer: BaseCheckpointSaver,
  threadId: string,
  page: { limit: number; offset: number },
): Promise<ThreadHistoryPage> {
  const checkpoints: ThreadCheckpoint[] = [];
  let seen = 0;
  let hasMore = false;
  for await (const tuple of checkpointer.list(rootConfig(threadId), {
    limit: page.offset + page.limit + 1,
  })) {
    if (tuple.config.configurable?.['checkpoint_ns'] !== ROOT_CHECKPOINT_NS) continue;
    seen += 1;
    if (seen <= page.offset) continue;
    if (checkpoints.length >= page.limit) {
      hasMore = true;
      break;
    }
    checkpoints.push(describeCheckpoint(tuple));
  }
  return { checkpoints, hasMore };
}

/** One root checkpoint of the thread; undefined when the thread has no such checkpoint. */
export async function rootCheckpoint(
  checkpointer: BaseCheckpointSaver,
  threadId: string,
  checkpointId?: string,
): Promise<CheckpointTuple | undefined> {
  const tuple = await checkpointer.getTuple(rootConfig(threadId, checkpointId));
  if (!tuple) return undefined;
  if (checkpointId !== undefined && tuple.checkpoint.id !== checkpointId) return undefined;
  return tuple;
}

/**
 * The root checkpoint right after `messageId` was added: the oldest kept one that holds it,
 * provided it is that point. Undefined when no kept checkpoint is: none holds the message, or
 * retention pruned the step that added it — then the oldest kept holder (the head, after
 * `keep_latest`) also holds what later steps added, and answering it would silently rewind to
 * somewhere else.
 */
export async function checkpointWithMessage(
  checkpointer: BaseCheckpointSaver,
  threadId: string,
  messageId: string,
): Promise<CheckpointTuple | undefined> {
  let oldest: CheckpointTuple | undefined;
  const kept = new Set<string>();
  for await (const tuple of checkpointer.list(rootConfig(threadId))) {
    if (tuple.config.configurable?.['checkpoint_ns'] !== ROOT_CHECKPOINT_NS) continue;
    kept.add(tuple.checkpoint.id);
    if (checkpointMessages(tuple.checkpoint).some((m) => m.id === messageId)) oldest = tuple;
  }
  return oldest && addedBy(oldest, messageId, kept) ? oldest : undefined;
}

/**
 * Whether `tuple`, the oldest kept checkpoint holding `messageId`, is the state right after it:
 * the message is its last one, or its parent is kept (and so, being older, lacks the message:
 * this step added it, with whatever else the same step added). A parent that is gone leaves it
 * unknown which step added the message.
 */
function addedBy(tuple: CheckpointTuple, messageId: string, kept: ReadonlySet<string>): boolean {
  const messages = checkpointMessages(tuple.checkpoint);
  if (messages[messages.length - 1]?.id === messageId) return true;
  const parentId: unknown = tuple.parentConfig?.configurable?.['checkpoint_id'];
  return typeof parentId === 'string' && kept.has(parentId);
}

/** A new checkpoint id greater than `after` (ids are uuid6: they sort by time). */
function checkpointIdAfter(after: string | null): string {
  let id = uuid6(-1);
  while (after !== null && id <= after) id = uuid6(-1);
  return id;
}

/**
 * Writes a copy of `source`'s state as the new head of `threadId`: a new checkpoint (new id,
 * greater than the current head's; parent: the current head; metadata step: the head's + 1,
 * source `update`) whose channel values are `transform(values)` (default unchanged) and whose
 * versions equal the source's, so LangGraph continues from it exactly as it would from the
 * source. Every channel is written in full (nothing is carried from the parent). The backend
 * projects it into message rows like any root checkpoint. Returns the new checkpoint's id.
 */
export async function putCheckpointCopy(
  checkpointer: BaseCheckpointSaver,
  source: CheckpointTuple,
  threadId: string,
  transform: (values: Record<string, unknown>) => Record<string, unknown> = (values) => values,
  /**
   * `head` (default): the copy follows the current head (the history stays one line). `source`
   * (the source must be a checkpoint of `threadId`): the copy's parent is the source, so the
   * history branches there, as LangGraph's time travel does; its step is the source's + 1.
   */
  parent: 'head' | 'source' = 'head',
): Promise<string> {
  const head = await rootCheckpoint(checkpointer, threadId);
  const after = parent === 'source' ? source : head;
  const headStep = (after?.metadata as { step?: unknown } | undefined)?.step;
  const id = checkpointIdAfter(head?.checkpoint.id ?? null);
  const values = transform({ ...(source.checkpoint.channel_values ?? {}) });
  const versions = { ...(source.checkpoint.channel_versions ?? {}) };
  for (const channel of Object.keys(values)) versions[channel] ??= 1;
  const checkpoint: Checkpoint = {
    ...source.checkpoint,
    id,
    ts: new Date().toISOString(),
    channel_values: values,
    channel_versions: versions,
  };
  await checkpointer.put(
    rootConfig(threadId, after?.checkpoint.id),
    checkpoint,
    { source: 'update', step: typeof headStep === 'number' ? headStep + 1 : 0, parents: {} },
    versions,
  );
  return id;
}

/**
 * Copies every root checkpoint of `fromThreadId` into `toThreadId`, oldest first, with the same
 * checkpoint ids, parents, metadata and pending writes (a thread copy keeps its whole history,
 * as LangGraph's does, message ids included: they are unique per session, not across them);
 * `transform` rewrites each one's channel values. The backend projects each into
 * message rows like any root checkpoint. Returns how many were copied.
 */
export async function copyThreadCheckpoints(
  checkpointer: BaseCheckpointSaver,
  fromThreadId: string,
  toThreadId: string,
  transform: (values: Record<string, unknown>) => Record<string, unknown> = (values) => values,
): Promise<number> {
  const tuples: CheckpointTuple[] = [];
  for await (const tuple of checkpointer.list(rootConfig(fromThreadId))) {
    if (tuple.config.configurable?.['checkpoint_ns'] !== ROOT_CHECKPOINT_NS) continue;
    tuples.push(tuple);
  }
  // Listed newest first: a checkpoint's parent is written before it.
  for (const tuple of tuples.reverse()) {
    const checkpoint: Checkpoint = {
      ...tuple.checkpoint,
      channel_values: transform({ ...(tuple.checkpoint.channel_values ?? {}) }),
    };
    const parentId: unknown = tuple.parentConfig?.configurable?.['checkpoint_id'];
    const written = await checkpointer.put(
      rootConfig(toThreadId, typeof parentId === 'string' ? parentId : undefined),
      checkpoint,
      tuple.metadata ?? { source: 'update', step: -1, parents: {} },
      { ...checkpoint.channel_versions },
    );
    const byTask = new Map<string, [string, unknown][]>();
    for (const [task, channel, value] of tuple.pendingWrites ?? []) {
      const writes = byTask.get(task) ?? [];
      writes.push([channel, value]);
      byTask.set(task, writes);
    }
    for (const [task, writes] of byTask) await checkpointer.putWrites(written, writes, task);
  }
  return tuples.length;
}
