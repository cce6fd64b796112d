// Kept whole at ~400 lines: it is one thing, the in-memory checkpoint store of a thread. The
// saver's reads and put and the thread operations the backend calls (retention, rewind, delete,
// footprint) all edit the same private maps (channel sources, segment bytes, recent arrays,
// write times) in one synchronous step; the parts that stand alone already live beside it
// (array channels in memory-array-channels.ts, key checks in checkpoint-keys.ts).
import type { BaseMessage } from '@langchain/core/messages';
import type { RunnableConfig } from '@langchain/core/runnables';
import type {
  ChannelVersions,
  Checkpoint,
  CheckpointListOptions,
  CheckpointMetadata,
  CheckpointPendingWrite,
  CheckpointTuple,
} from '@langchain/langgraph-checkpoint';
import {
  BaseCheckpointSaver,
  MemorySaver,
  copyCheckpoint,
  getCheckpointId,
} from '@langchain/langgraph-checkpoint';
import type { RunFence } from '@cognition/storage';
import {
  MESSAGES_CHANNEL,
  ROOT_CHECKPOINT_NS,
  RunFencedError,
  StorageError,
  checkpointMessages,
  keepsItems,
  runFenceOf,
} from '@cognition/storage';
import type { ChannelSource } from './memory-array-channels';
import {
  addCarriedValues,
  assembleArrays,
  changedValues,
  channelSources,
  storeArrays,
} from './memory-array-channels';
import { latestId, namespaceKey, storageKey } from './checkpoint-keys';

/**
 * The first `kept` entries of a checkpoint's `messages` channel are those of checkpoint
 * `checkpointId` (its parent): a projection of that checkpoint has only the rest to apply.
 */
export interface MessagesBase {
  checkpointId: string;
  kept: number;
}

/** What the checkpointer needs from the backend to project a session thread's checkpoints. */
export interface CheckpointProjector {
  /** The id of the session that owns `threadId`, if any. */
  sessionOfThread(threadId: string): string | undefined;
  /** Rewrites the session's message rows; called synchronously right after the checkpoint write. */
  applyProjection(
    sessionId: string,
    checkpointId: string,
    messages: BaseMessage[],
    base?: MessagesBase,
  ): void;
  /** Run fencing: whether the run is still held under the fence (none given: always). */
  fenceHolds?(fence: RunFence): boolean;
}

/** One checkpoint as `MemorySaver` keeps it: serialized checkpoint, metadata, parent id. */
type StoredCheckpoint = [Uint8Array, Uint8Array, string | undefined];

/**
 * LangGraph's `MemorySaver`, storing channel deltas, whose `put` on the root namespace of a
 * session's thread also writes the message projection.
 *
 * Invariants:
 * - a stored checkpoint holds only the values of the channels named in `newVersions`; a read
 *   adds, for every other versioned channel, the value the nearest ancestor stored for it at
 *   the same version (the chain is followed only while the version is unchanged), so a
 *   channel's value is kept once per version, not once per checkpoint (the Prisma saver's
 *   semantics);
 * - the projection lands in the same synchronous step as the checkpoint: no caller can observe
 *   (and no failure can leave) a session's root checkpoint without its projection, which is
 *   computed from the full checkpoint passed to `put`;
 * - everything a read needs is captured synchronously when it starts, so a concurrent `put` or
 *   thread delete never yields a checkpoint with half its channels.
 *
 * - an array value (the `messages` channel) is kept as slices of segments: a step whose array
 *   starts with the very objects of the parent's (LangGraph's messages reducer keeps unchanged
 *   messages) serializes only the rest, so a step costs what it changed, not the thread's
 *   length; the projection then rewrites only the rows after the parent's messages.
 *
 * `getDeltaChannelHistory` is `BaseCheckpointSaver`'s walk over `getTuple` (MemorySaver's own
 * reads values from the serialized checkpoints, where array values no longer are).
 */
export class ProjectingMemorySaver extends MemorySaver {
  /**
   * The channel sources of every stored checkpoint, keyed by its serialized bytes: entries go
   * away with the stored checkpoint (overwrite or thread delete) without bookkeeping.
   */
  private readonly sources = new WeakMap<Uint8Array, ReadonlyMap<string, ChannelSource>>();

  /** Bytes of the segments each stored checkpoint created (keyed like `sources`). */
  private readonly segmentBytes = new WeakMap<Uint8Array, number>();

  /**
   * Per (thread, namespace), the array values of the checkpoint last put or read as the latest
   * (the very arrays, copied): what the next put, its child, compares its arrays with.
   */
  private readonly recentArrays = new Map<
    string,
    { checkpointId: string; arrays: Map<string, readonly unknown[]> }
  >();

  constructor(private readonly projector: CheckpointProjector) {
    super();
  }

  override getDeltaChannelHistory(
    options: Parameters<BaseCheckpointSaver['getDeltaChannelHistory']>[0],
  ): ReturnType<BaseCheckpointSaver['getDeltaChannelHistory']> {
    return BaseCheckpointSaver.prototype.getDeltaChannelHistory.call(this, options);
  }

  /** The id of the thread's latest root checkpoint (the greatest id, as getTuple picks it). */
  latestRootCheckpointId(threadId: string): string | null {
    const checkpoints = this.storage[threadId]?.[ROOT_CHECKPOINT_NS];
    return checkpoints ? latestId(checkpoints) : null;
  }

  /** When each root checkpoint was written (`<thread>\u0000<id>`), for age-based retention. */
  private readonly writtenAt = new Map<string, Date>();

  /** The thread's root checkpoints, newest first. */
  rootCheckpoints(threadId: string): { checkpointId: string; createdAt: Date }[] {
    const checkpoints = this.storage[threadId]?.[ROOT_CHECKPOINT_NS] ?? {};
    return Object.keys(checkpoints)
      .sort((a, b) => (a < b ? 1 : -1))
      .map((checkpointId) => ({
        checkpointId,
        createdAt: this.writtenAt.get(`${threadId}\u0000${checkpointId}`) ?? new Date(0),
      }));
  }

  /** Deletes root checkpoints (and their writes) except the head; returns how many went. */
  deleteRootCheckpoints(threadId: string, checkpointIds: readonly string[]): number {
    const checkpoints = this.storage[threadId]?.[ROOT_CHECKPOINT_NS];
    if (!checkpoints) return 0;
    const head = latestId(checkpoints);
    let deleted = 0;
    for (const id of new Set(checkpointIds)) {
      if (id === head || !(id in checkpoints)) continue;
      delete checkpoints[id];
      delete this.writes[JSON.stringify([threadId, ROOT_CHECKPOINT_NS, id])];
      this.writtenAt.delete(`${threadId}\u0000${id}`);
      deleted += 1;
    }
    return deleted;
  }

  /**
   * Deletes the thread's checkpoints (every namespace) with an id greater than `afterId` (all
   * when null) and their pending writes; returns how many checkpoints went. Ids are uuid6:
   * time-ordered as strings.
   */
  deleteCheckpointsAfter(threadId: string, afterId: string | null): number {
    let deleted = 0;
    for (const checkpoints of Object.values(this.storage[threadId] ?? {})) {
      for (const id of Object.keys(checkpoints)) {
        if (afterId !== null && id <= afterId) continue;
        delete checkpoints[id];
        deleted += 1;
      }
    }
    for (const key of Object.keys(this.writes)) {
      const [owner, , checkpointId] = JSON.parse(key) as [string, string, string];
      if (owner === threadId && (afterId === null || checkpointId > afterId)) {
        delete this.writes[key];
      }
    }
    return deleted;
  }

  /** Counts and serialized bytes of the thread's checkpoints and writes (every namespace). */
  footprint(threadId: string): { checkpoints: number; writes: number; bytes: number } {
    let checkpoints = 0;
    let writes = 0;
    let bytes = 0;
    for (const byId of Object.values(this.storage[threadId] ?? {})) {
      for (const [checkpoint, metadata] of Object.values(byId)) {
        checkpoints += 1;
        bytes +=
          checkpoint.byteLength + metadata.byteLength + (this.segmentBytes.get(checkpoint) ?? 0);
      }
    }
    for (const [key, entries] of Object.entries(this.writes)) {
      const [owner] = JSON.parse(key) as [string];
      if (owner !== threadId) continue;
      for (const entry of Object.values(entries)) {
        writes += 1;
        bytes += entry[2].byteLength;
      }
    }
    return { checkpoints, writes, bytes };
  }

  /** Synchronous deleteThread, so session delete removes the thread in its own atomic step. */
  deleteThreadNow(threadId: string): void {
    delete this.storage[threadId];
    for (const key of [...this.recentArrays.keys()]) {
      if (key.startsWith(`${threadId}\u0000`)) this.recentArrays.delete(key);
    }
    // MemorySaver keys pending writes by JSON.stringify([threadId, namespace, checkpointId]).
    for (const key of Object.keys(this.writes)) {
      const [owner] = JSON.parse(key) as [string];
      if (owner === threadId) delete this.writes[key];
    }
  }

  override async getTuple(config: RunnableConfig): Promise<CheckpointTuple | undefined> {
    const configurable = config.configurable ?? {};
    if (configurable['thread_id'] === undefined || configurable['thread_id'] === null)
      return undefined;
    const threadId = storageKey(configurable['thread_id'], 'configurable.thread_id');
    const namespace = namespaceKey(configurable['checkpoint_ns']);
    const requested = getCheckpointId(config);
    if (requested) storageKey(requested, 'configurable.checkpoint_id');
    const checkpoints = this.storage[threadId]?.[namespace];
    if (!checkpoints) return undefined;
    const checkpointId = requested || latestId(checkpoints);
    const stored = checkpointId === null ? undefined : checkpoints[checkpointId];
    if (checkpointId === null || !stored) return undefined;
    const tuple = await this.toTuple(threadId, namespace, checkpointId, stored);
    // A read of the latest checkpoint is how a run starts: its child is written against the
    // arrays handed out here (reads of a given id, time travel, are left out).
    if (!requested) this.rememberArrays(threadId, namespace, checkpointId, tuple.checkpoint);
    return tuple;
  }

  private rememberArrays(
    threadId: string,
    namespace: string,
    checkpointId: string,
    checkpoint: Checkpoint,
  ): void {
    const arrays = new Map<string, readonly unknown[]>();
    for (const [channel, value] of Object.entries(checkpoint.channel_values ?? {})) {
      if (Array.isArray(value) && keepsItems(value)) arrays.set(channel, value.slice());
    }
    this.recentArrays.set(`${threadId}\u0000${namespace}`, { checkpointId, arrays });
  }

  override async *list(
    config: RunnableConfig,
    options: CheckpointListOptions = {},
  ): AsyncGenerator<CheckpointTuple> {
    const configurable = config.configurable ?? {};
    const thread: unknown = configurable['thread_id'];
    const ns: unknown = configurable['checkpoint_ns'];
    const id: unknown = configurable['checkpoint_id'];
    const beforeId: unknown = options.before?.configurable?.['checkpoint_id'];
    const threadFilter = thread ? storageKey(thread, 'configurable.thread_id') : undefined;
    const namespaceFilter = ns === undefined || ns === null ? undefined : namespaceKey(ns);
    const idFilter = id ? storageKey(id, 'configurable.checkpoint_id') : undefined;
    const before = beforeId ? storageKey(beforeId, 'before.configurable.checkpoint_id') : undefined;
    const filter = Object.entries(options.filter ?? {});
    let remaining = options.limit ?? Infinity;

    const threadIds = threadFilter === undefined ? Object.keys(this.storage) : [threadFilter];
    for (const threadId of threadIds) {
      for (const [namespace, checkpoints] of Object.entries(this.storage[threadId] ?? {})) {
        if (namespaceFilter !== undefined && namespace !== namespaceFilter) continue;
        // Newest first, captured now: puts made while the caller iterates are not listed.
        const newestFirst = Object.entries(checkpoints).sort(([a], [b]) => (a < b ? 1 : -1));
        for (const [checkpointId, stored] of newestFirst) {
          if (remaining <= 0) return;
          if (idFilter !== undefined && checkpointId !== idFilter) continue;
          if (before !== undefined && checkpointId >= before) continue;
          const metadata = (await this.serde.loadsTyped('json', stored[1])) as Record<
            string,
            unknown
          >;
          if (!filter.every(([key, value]) => metadata[key] === value)) continue;
          remaining -= 1;
          yield await this.toTuple(threadId, namespace, checkpointId, stored);
        }
      }
    }
  }

  /** Pending writes under a run's fence are refused once another claim took the run. */
  override async putWrites(
    ...args: Parameters<MemorySaver['putWrites']>
  ): ReturnType<MemorySaver['putWrites']> {
    this.checkFence(args[0]);
    return super.putWrites(...args);
  }

  private checkFence(config: RunnableConfig): void {
    const fence = runFenceOf(config);
    if (fence && this.projector.fenceHolds && !this.projector.fenceHolds(fence)) {
      throw new RunFencedError([fence.runId]);
    }
  }

  override async put(
    config: RunnableConfig,
    checkpoint: Checkpoint,
    metadata: CheckpointMetadata,
    newVersions: ChannelVersions = {},
  ): Promise<RunnableConfig> {
    const configurable = config.configurable ?? {};
    const threadId = storageKey(configurable['thread_id'], 'configurable.thread_id');
    const namespace = namespaceKey(configurable['checkpoint_ns']);
    const checkpointId = storageKey(checkpoint.id, 'checkpoint.id');
    const parent: unknown = configurable['checkpoint_id'];
    const parentId = parent ? storageKey(parent, 'configurable.checkpoint_id') : undefined;

    const sessionId =
      namespace === ROOT_CHECKPOINT_NS ? this.projector.sessionOfThread(threadId) : undefined;
    const messages = sessionId === undefined ? [] : checkpointMessages(checkpoint);
    const changed = changedValues(checkpoint, newVersions);
    const parentAtStart =
      parentId === undefined ? undefined : this.storage[threadId]?.[namespace]?.[parentId];
    const parentSources = parentAtStart && this.sources.get(parentAtStart[0]);
    const recent = this.recentArrays.get(`${threadId}\u0000${namespace}`);
    const { lists, freshBytes, keptMessages } = await storeArrays(
      this.serde,
      changed,
      parentSources,
      recent?.checkpointId === parentId ? recent?.arrays : undefined,
    );
    let base: MessagesBase | undefined =
      parentId !== undefined && keptMessages !== undefined
        ? { checkpointId: parentId, kept: keptMessages }
        : undefined;
    const [[, serializedCheckpoint], [, serializedMetadata]] = await Promise.all([
      this.serde.dumpsTyped({ ...copyCheckpoint(checkpoint), channel_values: changed }),
      this.serde.dumpsTyped(metadata),
    ]);

    // From here to the return nothing awaits: checkpoint, channel sources and projection land
    // together, against the parent as it is now (and under the run's fence as it is now).
    this.checkFence(config);
    if (sessionId !== undefined && this.projector.sessionOfThread(threadId) !== sessionId)
      throw StorageError.sessionNotFound(sessionId);
    const isLatest =
      sessionId !== undefined && (this.latestRootCheckpointId(threadId) ?? '') <= checkpointId;
    const byNamespace = (this.storage[threadId] ??= Object.create(null) as Record<
      string,
      Record<string, StoredCheckpoint>
    >);
    const checkpoints = (byNamespace[namespace] ??= Object.create(null) as Record<
      string,
      StoredCheckpoint
    >);
    const parentStored = parentId === undefined ? undefined : checkpoints[parentId];
    const sources = channelSources(
      checkpoint.channel_versions ?? {},
      newVersions,
      Object.keys(changed),
      lists,
      serializedCheckpoint,
      parentStored && this.sources.get(parentStored[0]),
    );
    // The messages channel carried over unchanged: the parent's messages, all of them.
    const carried = parentId !== undefined ? sources.get(MESSAGES_CHANNEL) : undefined;
    if (carried && !Object.hasOwn(newVersions, MESSAGES_CHANNEL) && carried.slices) {
      base = {
        checkpointId: parentId as string,
        kept: carried.slices.reduce((n, s) => n + s.count, 0),
      };
    }
    this.sources.set(serializedCheckpoint, sources);
    this.segmentBytes.set(serializedCheckpoint, freshBytes);
    this.rememberArrays(threadId, namespace, checkpointId, checkpoint);
    checkpoints[checkpointId] = [serializedCheckpoint, serializedMetadata, parentId];
    if (namespace === ROOT_CHECKPOINT_NS)
      this.writtenAt.set(`${threadId}\u0000${checkpointId}`, new Date());
    if (sessionId !== undefined && isLatest)
      this.projector.applyProjection(sessionId, checkpointId, messages, base);
    return {
      configurable: { thread_id: threadId, checkpoint_ns: namespace, checkpoint_id: checkpointId },
    };
  }

  /**
   * Builds the tuple of one stored checkpoint: its own channel values plus the carried ones.
   * Its channel sources and writes are captured before the first await.
   */
  private async toTuple(
    threadId: string,
    namespace: string,
    checkpointId: string,
    [serializedCheckpoint, serializedMetadata, parentId]: StoredCheckpoint,
  ): Promise<CheckpointTuple> {
    const sources = this.sources.get(serializedCheckpoint);
    // MemorySaver's own ordering of its write records, so the order matches its putWrites.
    const writes = this._orderedWrites(threadId, namespace, checkpointId);
    const checkpoint = (await this.serde.loadsTyped('json', serializedCheckpoint)) as Checkpoint;
    if (sources) {
      await addCarriedValues(this.serde, checkpoint, serializedCheckpoint, sources);
      await assembleArrays(this.serde, checkpoint, sources);
    }
    // Pre-v4 checkpoints kept pending sends as writes on their parent.
    if (checkpoint.v < 4 && parentId !== undefined)
      await this._migratePendingSends(checkpoint, threadId, namespace, parentId);
    const pendingWrites = await Promise.all(
      writes.map(async ([, , [taskId, channel, value]]): Promise<CheckpointPendingWrite> => [
        taskId,
        channel,
        await this.serde.loadsTyped('json', value),
      ]),
    );
    const tuple: CheckpointTuple = {
      config: {
        configurable: {
          thread_id: threadId,
          checkpoint_ns: namespace,
          checkpoint_id: checkpointId,
        },
      },
      checkpoint,
      metadata: (await this.serde.loadsTyped('json', serializedMetadata)) as CheckpointMetadata,
      pendingWrites,
    };
    if (parentId !== undefined) {
      tuple.parentConfig = {
        configurable: { thread_id: threadId, checkpoint_ns: namespace, checkpoint_id: parentId },
      };
    }
    return tuple;
  }
}
