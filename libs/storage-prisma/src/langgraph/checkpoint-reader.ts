import { StorageError, keepsItems } from '@cognition/storage';
import {
  TASKS,
  compareWritesSortKeys,
  maxChannelVersion,
  writesSortKey,
} from '@langchain/langgraph-checkpoint';
import type {
  Checkpoint,
  CheckpointMetadata,
  CheckpointPendingWrite,
  CheckpointTuple,
  SerializerProtocol,
} from '@langchain/langgraph-checkpoint';
import { guard } from '../db/errors';
import type { Segment } from './checkpoint-codec';
import { decodeCheckpointBlob, foreignHolders } from './checkpoint-codec';
import type { CheckpointRow, CheckpointSql, WriteRow } from './sql/checkpoint-sql';
import type { KnownEntry } from './list-channels';

/**
 * The read side of `PrismaCheckpointSaver`: checkpoint rows and their writes back into
 * LangGraph tuples — the skeleton, value entries, list channels assembled from the segments
 * they refer to (this row's, the page's, else one query), pending writes in `writesSortKey`
 * order, pre-v4 pending sends. Writing (planning segments, the hook) stays in the saver.
 */
export class CheckpointReader {
  constructor(
    private readonly serde: SerializerProtocol,
    private readonly sql: CheckpointSql,
    /** The saver's first channel version (for a pre-v4 checkpoint without any). */
    private readonly nextVersion: () => string | number,
  ) {}

  /** The writes of the row at `row`'s key among `writes` (as one query fetched them). */
  writesOf(row: CheckpointRow, writes: WriteRow[]): WriteRow[] {
    return (
      groupWrites(writes).get(writeKey(row.threadId, row.checkpointNs, row.checkpointId)) ?? []
    );
  }

  async metadataOf(row: CheckpointRow): Promise<CheckpointMetadata> {
    return (await this.serde.loadsTyped(row.type ?? 'json', row.metadata)) as CheckpointMetadata;
  }

  /**
   * Turns checkpoint rows and their writes into tuples, one row at a time (decoding is most of
   * the cost of a read; a caller that stops early does not pay for the rest). Segments held by
   * rows of the page are taken from the page.
   */
  async *tuples(rows: CheckpointRow[], writes: WriteRow[]): AsyncGenerator<CheckpointTuple> {
    const writesByCheckpoint = groupWrites(writes);
    const holders: HolderSegments = new Map();
    for (const row of rows) {
      yield (
        await this.toTuple(
          row,
          writesByCheckpoint.get(writeKey(row.threadId, row.checkpointNs, row.checkpointId)) ?? [],
          holders,
          rows,
          false,
        )
      ).tuple;
    }
  }

  async toTuple(
    row: CheckpointRow,
    writes: WriteRow[],
    holders: HolderSegments,
    page: readonly CheckpointRow[],
    keep: boolean,
  ): Promise<{ tuple: CheckpointTuple; known: KnownEntry[] }> {
    const { checkpoint, known } = await this.loadCheckpoint(row, holders, page, keep).catch(
      (error: unknown) => {
        throw new StorageError(
          'STORAGE_ERROR',
          `Cannot decode checkpoint ${row.checkpointId} of thread ${row.threadId}: ${String(error)}`,
          { cause: error },
        );
      },
    );
    if (row.parentCheckpointId !== null && checkpoint.v < 4) {
      await this.migratePendingSends(row, row.parentCheckpointId, checkpoint);
    }
    const pendingWrites: CheckpointPendingWrite[] = [];
    for (const write of writes) {
      pendingWrites.push([
        write.taskId,
        write.channel,
        await this.serde.loadsTyped(write.type ?? 'json', write.value),
      ]);
    }
    const tuple: CheckpointTuple = {
      config: {
        configurable: {
          thread_id: row.threadId,
          checkpoint_ns: row.checkpointNs,
          checkpoint_id: row.checkpointId,
        },
      },
      checkpoint,
      metadata: await this.metadataOf(row),
      pendingWrites,
    };
    if (row.parentCheckpointId !== null) {
      tuple.parentConfig = {
        configurable: {
          thread_id: row.threadId,
          checkpoint_ns: row.checkpointNs,
          checkpoint_id: row.parentCheckpointId,
        },
      };
    }
    return { tuple, known };
  }

  /**
   * Pre-v4 checkpoints kept their pending sends as `__pregel_tasks` writes on the parent; they
   * become the TASKS channel, as the official savers do. One more query, only for such rows.
   */
  private async migratePendingSends(
    row: CheckpointRow,
    parentId: string,
    checkpoint: Checkpoint,
  ): Promise<void> {
    const sends = await guard('Cannot read pending sends', () =>
      this.sql.channelWrites(row.threadId, row.checkpointNs, parentId, TASKS),
    );
    const values: unknown[] = [];
    for (const write of sortWrites(sends)) {
      values.push(await this.serde.loadsTyped(write.type ?? 'json', write.value));
    }
    checkpoint.channel_values[TASKS] = values;
    const existing = Object.values(checkpoint.channel_versions);
    checkpoint.channel_versions[TASKS] =
      existing.length > 0 ? maxChannelVersion(...existing) : this.nextVersion();
  }

  /**
   * Decodes a row: its skeleton, its value entries, and its list entries assembled from the
   * segments they refer to (this row's, the page's, else read in one query). With `keep`, also
   * returns what the saver knows of each channel for a child's put (copies: empty otherwise).
   */
  private async loadCheckpoint(
    row: CheckpointRow,
    holders: HolderSegments,
    page: readonly CheckpointRow[],
    keep: boolean,
  ): Promise<{ checkpoint: Checkpoint; known: KnownEntry[] }> {
    const blob = decodeCheckpointBlob(row.checkpoint);
    const skeleton = (await this.serde.loadsTyped(blob.skeletonType, blob.skeleton)) as Omit<
      Checkpoint,
      'channel_values'
    >;
    const versions = skeleton.channel_versions ?? {};
    const current = blob.entries.filter((entry) => {
      const version = versions[entry.channel];
      return version !== undefined && String(version) === entry.version;
    });
    holders.set(row.checkpointId, blob.segments);
    const foreign = foreignHolders(current, row.checkpointId);
    if (foreign.length > 0) await this.fetchHolders(row, foreign, holders, page);
    const decoded = new Map<string, unknown[]>();
    const channelValues: Record<string, unknown> = {};
    const known: KnownEntry[] = [];
    for (const entry of current) {
      if (entry.kind === 'value') {
        // Serializers return 'bytes' values as given: those get a copy, so a value never pins
        // the row's blob. Everything else is decoded straight from the view.
        const data = entry.type === 'bytes' ? entry.value.slice() : entry.value;
        channelValues[entry.channel] = await this.serde.loadsTyped(entry.type, data);
        if (keep) known.push({ ...entry, value: entry.value.slice() });
        continue;
      }
      let items: unknown[] = [];
      let bytes = 0;
      for (const ref of entry.refs) {
        const segment = holders.get(ref.holder)?.[ref.index];
        if (!segment) {
          throw new Error(`segment ${ref.index} of checkpoint ${ref.holder} is missing`);
        }
        const key = `${ref.holder}\u0000${ref.index}`;
        let values = decoded.get(key);
        if (!values) {
          const loaded: unknown = await this.serde.loadsTyped(segment.type, segment.value);
          if (!Array.isArray(loaded)) throw new Error(`segment ${key} is not an array`);
          values = loaded;
          decoded.set(key, values);
        }
        if (entry.refs.length === 1 && ref.start === 0 && ref.count === values.length) {
          // The whole value is one whole segment, decoded for this read alone.
          items = values;
        } else {
          for (let i = ref.start; i < ref.start + ref.count; i += 1) items.push(values[i]);
        }
        bytes += Math.round((segment.value.length * ref.count) / Math.max(1, segment.count));
      }
      channelValues[entry.channel] = items;
      if (keep)
        known.push({ ...entry, ...(keepsItems(items) ? { items: items.slice() } : {}), bytes });
    }
    return {
      checkpoint: {
        ...skeleton,
        channel_versions: { ...versions },
        versions_seen: skeleton.versions_seen ?? {},
        channel_values: channelValues,
      },
      known,
    };
  }

  /** Puts the segments of checkpoints `ids` into `holders`: from `page`, else one query. */
  private async fetchHolders(
    row: CheckpointRow,
    ids: readonly string[],
    holders: HolderSegments,
    page: readonly CheckpointRow[],
  ): Promise<void> {
    const missing: string[] = [];
    for (const id of ids) {
      if (holders.has(id)) continue;
      const inPage = page.find(
        (other) =>
          other.checkpointId === id &&
          other.threadId === row.threadId &&
          other.checkpointNs === row.checkpointNs,
      );
      if (inPage) holders.set(id, decodeCheckpointBlob(inPage.checkpoint).segments);
      else missing.push(id);
    }
    if (missing.length === 0) return;
    const blobs = await guard('Cannot read checkpoint segments', () =>
      this.sql.checkpointBlobs(row.threadId, row.checkpointNs, missing),
    );
    for (const [id, bytes] of blobs) holders.set(id, decodeCheckpointBlob(bytes).segments);
  }
}

/**
 * Segments of checkpoints by id, gathered during one read (a page of `list` shares them). Keys
 * are checkpoint ids of the thread and namespace of the rows being read.
 */
type HolderSegments = Map<string, Segment[]>;

/** Groups writes by checkpoint, each group in {@link sortWrites} order. */
function groupWrites(writes: WriteRow[]): Map<string, WriteRow[]> {
  const groups = new Map<string, WriteRow[]>();
  for (const write of writes) {
    const key = writeKey(write.threadId, write.checkpointNs, write.checkpointId);
    const group = groups.get(key);
    if (group) group.push(write);
    else groups.set(key, [write]);
  }
  for (const group of groups.values()) sortWrites(group);
  return groups;
}

/** Sorts writes in place into `writesSortKey` order `(task_path, task_id, idx)`. */
function sortWrites(writes: WriteRow[]): WriteRow[] {
  return writes.sort((a, b) =>
    compareWritesSortKeys(
      writesSortKey(a.taskPath, a.taskId, a.idx),
      writesSortKey(b.taskPath, b.taskId, b.idx),
    ),
  );
}

function writeKey(threadId: string, checkpointNs: string, checkpointId: string): string {
  return JSON.stringify([threadId, checkpointNs, checkpointId]);
}
