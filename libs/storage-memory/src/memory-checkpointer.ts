import type { RunnableConfig } from '@langchain/core/runnables';
import type { Checkpoint, CheckpointMetadata } from '@langchain/langgraph-checkpoint';
import { MemorySaver, copyCheckpoint } from '@langchain/langgraph-checkpoint';
import { ROOT_CHECKPOINT_NS, StorageError, checkpointMessages } from '@cognition/storage';
import type { BaseMessage } from '@langchain/core/messages';

/** What the checkpointer needs from the backend to project a session thread's checkpoints. */
export interface CheckpointProjector {
  /** The id of the session that owns `threadId`, if any. */
  sessionOfThread(threadId: string): string | undefined;
  /** Rewrites the session's message rows; called synchronously right after the checkpoint write. */
  applyProjection(sessionId: string, checkpointId: string, messages: BaseMessage[]): void;
}

/**
 * LangGraph's `MemorySaver` whose `put` on the root namespace of a session's thread also writes
 * the message projection, in the same synchronous step as the checkpoint itself: no caller can
 * observe (and no failure can leave) a checkpoint without its projection.
 */
export class ProjectingMemorySaver extends MemorySaver {
  constructor(private readonly projector: CheckpointProjector) {
    super();
  }

  /** The id of the thread's latest root checkpoint (the greatest id, as getTuple picks it). */
  latestRootCheckpointId(threadId: string): string | null {
    const checkpoints = this.storage[threadId]?.[ROOT_CHECKPOINT_NS];
    if (!checkpoints) return null;
    let latest: string | null = null;
    for (const id of Object.keys(checkpoints)) if (latest === null || id > latest) latest = id;
    return latest;
  }

  /** Synchronous deleteThread, so session delete removes the thread in its own atomic step. */
  deleteThreadNow(threadId: string): void {
    delete this.storage[threadId];
    // MemorySaver keys pending writes by JSON.stringify([threadId, namespace, checkpointId]).
    for (const key of Object.keys(this.writes)) {
      const [owner] = JSON.parse(key) as [string];
      if (owner === threadId) delete this.writes[key];
    }
  }

  override async put(
    config: RunnableConfig,
    checkpoint: Checkpoint,
    metadata: CheckpointMetadata,
  ): Promise<RunnableConfig> {
    const threadId: unknown = config.configurable?.thread_id;
    const namespace: unknown = config.configurable?.checkpoint_ns ?? ROOT_CHECKPOINT_NS;
    const sessionId =
      typeof threadId === 'string' ? this.projector.sessionOfThread(threadId) : undefined;
    if (
      sessionId === undefined ||
      namespace !== ROOT_CHECKPOINT_NS ||
      typeof checkpoint.id !== 'string' ||
      checkpoint.id === '' ||
      Object.prototype.hasOwnProperty.call(Object.prototype, checkpoint.id)
    ) {
      return super.put(config, checkpoint, metadata);
    }
    const thread = threadId as string;
    const messages = checkpointMessages(checkpoint);
    const [[, serializedCheckpoint], [, serializedMetadata]] = await Promise.all([
      this.serde.dumpsTyped(copyCheckpoint(checkpoint)),
      this.serde.dumpsTyped(metadata),
    ]);
    // From here to the return nothing awaits: checkpoint and projection land together.
    if (this.projector.sessionOfThread(thread) !== sessionId)
      throw StorageError.sessionNotFound(sessionId);
    const isLatest = (this.latestRootCheckpointId(thread) ?? '') <= checkpoint.id;
    const byNamespace = (this.storage[thread] ??= Object.create(null) as Record<
      string,
      Record<string, [Uint8Array, Uint8Array, string | undefined]>
    >);
    const checkpoints = (byNamespace[ROOT_CHECKPOINT_NS] ??= Object.create(null) as Record<
      string,
      [Uint8Array, Uint8Array, string | undefined]
    >);
    checkpoints[checkpoint.id] = [
      serializedCheckpoint,
      serializedMetadata,
      config.configurable?.checkpoint_id as string | undefined,
    ];
    if (isLatest) this.projector.applyProjection(sessionId, checkpoint.id, messages);
    return {
      configurable: {
        thread_id: thread,
        checkpoint_ns: ROOT_CHECKPOINT_NS,
        checkpoint_id: checkpoint.id,
      },
    };
  }
}
