import type { RunnableConfig } from '@langchain/core/runnables';
import type {
  ChannelVersions,
  Checkpoint,
  CheckpointListOptions,
  CheckpointMetadata,
  CheckpointTuple,
  DeltaChannelHistory,
  PendingWrite,
} from '@langchain/langgraph-checkpoint';
import { BaseCheckpointSaver, copyCheckpoint } from '@langchain/langgraph-checkpoint';

/**
 * A run's view of the checkpointer in which the graph's first read of the thread's head is the
 * one the run made just before (`getState`): a run reads the state (history, next step, head id)
 * and then `invoke`s, whose loop reads the same head again — one more round trip and one more
 * decode of the whole thread per turn.
 *
 * The first read of the root namespace's head (a tuple, or none: a new thread) is kept, handed out once to the next such read
 * (as a copy of the checkpoint's record, so what the first reader did to its versions cannot
 * leak into the second), and dropped on any write through this view. It is kept only when it
 * has no pending writes: `getState` applies those to the checkpoint it read, and a resumed run
 * (the one case with pending writes) reads again. Between the two reads the run holds the
 * thread (it is the session's active run: no other run writes its checkpoints), so the kept
 * head is the head.
 */
export class HeadReadReuse extends BaseCheckpointSaver {
  /** `tuple` undefined: the thread had no checkpoint (a new session's first run). */
  private kept: { threadId: string; tuple: CheckpointTuple | undefined } | undefined;
  private first = true;

  constructor(private readonly inner: BaseCheckpointSaver) {
    super(inner.serde);
  }

  override async getTuple(config: RunnableConfig): Promise<CheckpointTuple | undefined> {
    const threadId = headThreadOf(config);
    const kept = this.kept;
    if (threadId !== undefined && kept?.threadId === threadId) {
      this.kept = undefined;
      return kept.tuple && { ...kept.tuple, checkpoint: copyCheckpoint(kept.tuple.checkpoint) };
    }
    const tuple = await this.inner.getTuple(config);
    if (this.first && threadId !== undefined && !tuple?.pendingWrites?.length) {
      this.kept = { threadId, tuple };
    }
    this.first = false;
    return tuple;
  }

  override list(
    config: RunnableConfig,
    options?: CheckpointListOptions,
  ): AsyncGenerator<CheckpointTuple> {
    return this.inner.list(config, options);
  }

  override put(
    config: RunnableConfig,
    checkpoint: Checkpoint,
    metadata: CheckpointMetadata,
    newVersions: ChannelVersions,
  ): Promise<RunnableConfig> {
    this.kept = undefined;
    return this.inner.put(config, checkpoint, metadata, newVersions);
  }

  override putWrites(
    config: RunnableConfig,
    writes: PendingWrite[],
    taskId: string,
    taskPath?: string,
  ): Promise<void> {
    this.kept = undefined;
    return this.inner.putWrites(config, writes, taskId, taskPath);
  }

  override deleteThread(threadId: string): Promise<void> {
    this.kept = undefined;
    return this.inner.deleteThread(threadId);
  }

  override getDeltaChannelHistory(options: {
    config: RunnableConfig;
    channels: string[];
  }): Promise<Record<string, DeltaChannelHistory>> {
    return this.inner.getDeltaChannelHistory(options);
  }

  override getNextVersion(current: number | undefined): number {
    return this.inner.getNextVersion(current);
  }
}

/** The thread of a read of the root namespace's head (no checkpoint id), else undefined. */
function headThreadOf(config: RunnableConfig): string | undefined {
  const configurable = config.configurable ?? {};
  const threadId: unknown = configurable['thread_id'];
  if (typeof threadId !== 'string') return undefined;
  if (configurable['checkpoint_id'] || configurable['thread_ts']) return undefined;
  const ns: unknown = configurable['checkpoint_ns'];
  if (ns !== undefined && ns !== '') return undefined;
  return threadId;
}
