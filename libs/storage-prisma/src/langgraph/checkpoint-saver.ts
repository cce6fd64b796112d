import type { FieldIssue } from '@cognition/contracts';
import { StorageError } from '@cognition/storage';
import type { RunnableConfig } from '@langchain/core/runnables';
import {
  BaseCheckpointSaver,
  TASKS,
  WRITES_IDX_MAP,
  compareWritesSortKeys,
  maxChannelVersion,
  writesSortKey,
} from '@langchain/langgraph-checkpoint';
import type {
  ChannelVersions,
  Checkpoint,
  CheckpointListOptions,
  CheckpointMetadata,
  CheckpointPendingWrite,
  CheckpointTuple,
  PendingWrite,
  SerializerProtocol,
} from '@langchain/langgraph-checkpoint';
import type { DatabaseProvider, PrismaDb, PrismaTx } from '../db';
import { guard } from '../errors';
import type { ChannelEntry } from './checkpoint-codec';
import { decodeCheckpointBlob, encodeCheckpointBlob } from './checkpoint-codec';
import type { CheckpointRow, ListCursor, WriteRow } from './checkpoint-sql';
import { CheckpointSql } from './checkpoint-sql';
import { assertStorableString } from './namespace';

/**
 * Called inside the transaction of every `put` of a root checkpoint (`checkpoint_ns === ''`),
 * after the checkpoint row is written. Throwing rolls the checkpoint back with everything the
 * hook wrote, so whatever it maintains (the message projection) can never drift from the
 * checkpoints. `checkpoint` is the full checkpoint LangGraph passed to `put` (every channel
 * value, not only the changed ones).
 */
export type RootCheckpointHook = (
  tx: PrismaTx,
  threadId: string,
  checkpointId: string,
  checkpoint: Checkpoint,
) => Promise<void>;

export interface PrismaCheckpointSaverOptions {
  onRootCheckpoint?: RootCheckpointHook;
  /** Serializer of checkpoints, metadata and writes. Default: LangGraph's JsonPlusSerializer. */
  serde?: SerializerProtocol;
  /** The database's provider. Default: the one the Prisma client was generated for. */
  provider?: DatabaseProvider;
}

/** Bounds of the recent-puts cache (see {@link RecentCheckpoints}). */
const RECENT_MAX_THREADS = 256;
const RECENT_MAX_BYTES = 32 * 1024 * 1024;

/** Rows of one `list` page are loaded with their writes in one query per this many rows. */
const LIST_PAGE_SIZE = 100;

/**
 * LangGraph checkpointer on the `checkpoints` and `checkpoint_writes` tables of a Prisma
 * database (SQLite or PostgreSQL), passing `@langchain/langgraph-checkpoint-validation` in full.
 *
 * Invariants:
 * - a stored checkpoint holds the values of the channels named in `newVersions` plus the
 *   values its parent stored for the channels whose version did not change (the official
 *   PostgreSQL saver's semantics), so a read is one row;
 * - `put` is atomic: the row and, for root checkpoints, the {@link RootCheckpointHook}'s writes
 *   commit together or not at all;
 * - `putWrites` of regular writes never overwrites a stored write (insert-or-ignore on
 *   `(thread, ns, checkpoint, task, idx)`); a batch made only of special writes (error,
 *   interrupt, scheduled, resume; see `WRITES_IDX_MAP`) replaces them;
 * - pending writes come back in `writesSortKey` order `(task_path, task_id, idx)`;
 * - every failure is a StorageError: VALIDATION_ERROR naming the config field, or the
 *   translated database error.
 */
export class PrismaCheckpointSaver extends BaseCheckpointSaver {
  private readonly onRootCheckpoint: RootCheckpointHook | undefined;
  private readonly sql: CheckpointSql;
  private readonly recent = new RecentCheckpoints(RECENT_MAX_THREADS, RECENT_MAX_BYTES);

  constructor(
    private readonly db: PrismaDb,
    options: PrismaCheckpointSaverOptions = {},
  ) {
    super(options.serde);
    this.onRootCheckpoint = options.onRootCheckpoint;
    this.sql = new CheckpointSql(db, options.provider ?? providerOf(db));
  }

  async getTuple(config: RunnableConfig): Promise<CheckpointTuple | undefined> {
    const configurable = config.configurable ?? {};
    const threadId = optionalString(configurable['thread_id'], 'configurable.thread_id');
    if (!threadId) return undefined;
    const checkpointNs =
      optionalString(configurable['checkpoint_ns'], 'configurable.checkpoint_ns') ?? '';
    const checkpointId = optionalString(
      configurable['checkpoint_id'] ?? configurable['thread_ts'],
      'configurable.checkpoint_id',
    );
    const { rows, writes } = await guard('Cannot read checkpoint', () =>
      this.sql.checkpointWithWrites(threadId, checkpointNs, checkpointId || undefined),
    );
    const [tuple] = await this.toTuples(rows, writes);
    return tuple;
  }

  async *list(
    config: RunnableConfig,
    options: CheckpointListOptions = {},
  ): AsyncGenerator<CheckpointTuple> {
    const configurable = config.configurable ?? {};
    const threadId =
      optionalString(configurable['thread_id'], 'configurable.thread_id') || undefined;
    const checkpointNs = optionalString(
      configurable['checkpoint_ns'],
      'configurable.checkpoint_ns',
    );
    const checkpointId =
      optionalString(configurable['checkpoint_id'], 'configurable.checkpoint_id') || undefined;
    const before = optionalString(
      options.before?.configurable?.['checkpoint_id'],
      'before.configurable.checkpoint_id',
    );
    const { limit } = options;
    if (limit !== undefined && (!Number.isInteger(limit) || limit < 0)) {
      throw invalid('limit', 'must be a non-negative integer');
    }
    const filter = Object.entries(options.filter ?? {}).filter(([, value]) => value !== undefined);

    let remaining = limit ?? Infinity;
    let after: ListCursor | undefined;
    while (remaining > 0) {
      // Without a metadata filter every row is yielded, so a page never exceeds what is still due.
      const pageSize = filter.length === 0 ? Math.min(LIST_PAGE_SIZE, remaining) : LIST_PAGE_SIZE;
      const { rows, writes } = await guard('Cannot list checkpoints', () =>
        this.sql.checkpointsWithWrites({
          threadId,
          checkpointNs,
          checkpointId,
          before,
          after,
          limit: pageSize,
        }),
      );
      const last = rows[rows.length - 1];
      if (!last) return;
      let selected = rows;
      if (filter.length > 0) {
        const metadata = await Promise.all(
          rows.map(async (row) => (await this.loadMetadata(row)) as Record<string, unknown>),
        );
        selected = rows.filter((_, i) =>
          filter.every(([key, value]) => jsonEqual(metadata[i]?.[key], value)),
        );
        selected = selected.slice(0, remaining);
      }
      for (const tuple of await this.toTuples(selected, writes)) yield tuple;
      remaining -= selected.length;
      if (rows.length < pageSize) return;
      after = {
        threadId: last.threadId,
        checkpointNs: last.checkpointNs,
        checkpointId: last.checkpointId,
      };
    }
  }

  async put(
    config: RunnableConfig,
    checkpoint: Checkpoint,
    metadata: CheckpointMetadata,
    newVersions: ChannelVersions,
  ): Promise<RunnableConfig> {
    if (!config.configurable) throw invalid('configurable', 'is required');
    const threadId = optionalString(config.configurable['thread_id'], 'configurable.thread_id');
    if (!threadId) throw invalid('configurable.thread_id', 'is required to store a checkpoint');
    const checkpointNs =
      optionalString(config.configurable['checkpoint_ns'], 'configurable.checkpoint_ns') ?? '';
    const parentId =
      optionalString(config.configurable['checkpoint_id'], 'configurable.checkpoint_id') || null;
    assertStorableString(checkpoint.id, 'checkpoint.id');
    if (checkpoint.id === '') throw invalid('checkpoint.id', 'must not be empty');

    const [{ entries, blob }, [metadataType, metadataBytes]] = await Promise.all([
      this.dumpCheckpoint(threadId, checkpointNs, parentId, checkpoint, newVersions),
      this.dump(metadata, 'metadata'),
    ]);
    const row: CheckpointRow = {
      threadId,
      checkpointNs,
      checkpointId: checkpoint.id,
      parentCheckpointId: parentId,
      type: metadataType,
      checkpoint: blob,
      metadata: metadataBytes,
    };
    const hook = checkpointNs === '' ? this.onRootCheckpoint : undefined;
    await guard('Cannot store checkpoint', async () => {
      if (!hook) {
        await this.sql.upsertCheckpoint(this.db, row);
        return;
      }
      await this.db.$transaction(async (tx) => {
        await this.sql.upsertCheckpoint(tx, row);
        await hook(tx, threadId, checkpoint.id, checkpoint);
      });
    });
    this.recent.remember(threadId, checkpointNs, checkpoint.id, entries);
    return {
      configurable: {
        thread_id: threadId,
        checkpoint_ns: checkpointNs,
        checkpoint_id: checkpoint.id,
      },
    };
  }

  async putWrites(
    config: RunnableConfig,
    writes: PendingWrite[],
    taskId: string,
    taskPath = '',
  ): Promise<void> {
    const configurable = config.configurable ?? {};
    const threadId = optionalString(configurable['thread_id'], 'configurable.thread_id');
    if (!threadId) throw invalid('configurable.thread_id', 'is required to store writes');
    const checkpointId = optionalString(
      configurable['checkpoint_id'],
      'configurable.checkpoint_id',
    );
    if (!checkpointId) throw invalid('configurable.checkpoint_id', 'is required to store writes');
    const checkpointNs =
      optionalString(configurable['checkpoint_ns'], 'configurable.checkpoint_ns') ?? '';
    assertStorableString(taskId, 'taskId');
    assertStorableString(taskPath, 'taskPath');
    if (writes.length === 0) return;

    const rows = await Promise.all(
      writes.map(async ([channel, value], index): Promise<WriteRow> => {
        assertStorableString(channel, `writes[${index}][0]`);
        const [type, bytes] = await this.dump(value, `writes[${index}][1]`);
        const idx = specialIndex(channel) ?? index;
        return {
          threadId,
          checkpointNs,
          checkpointId,
          taskId,
          idx,
          channel,
          type,
          value: bytes,
          taskPath,
        };
      }),
    );
    // A batch of only special writes (error, interrupt, ...) replaces the task's previous ones;
    // regular writes are first-wins, so a retried task cannot change what was recorded.
    const replace = writes.every(([channel]) => specialIndex(channel) !== undefined);
    await guard('Cannot store checkpoint writes', () => this.sql.insertWrites(rows, replace));
  }

  async deleteThread(threadId: string): Promise<void> {
    assertStorableString(threadId, 'threadId');
    this.recent.forgetThread(threadId);
    await guard('Cannot delete thread checkpoints', () =>
      this.db.$transaction([
        this.db.checkpointWrite.deleteMany({ where: { threadId } }),
        this.db.checkpoint.deleteMany({ where: { threadId } }),
      ]),
    );
  }

  /**
   * Serializes the checkpoint: the skeleton, the values of the channels in `newVersions`, and
   * for every other versioned channel the parent's stored value when it is at the same version
   * (copied as bytes).
   */
  private async dumpCheckpoint(
    threadId: string,
    checkpointNs: string,
    parentId: string | null,
    checkpoint: Checkpoint,
    newVersions: ChannelVersions,
  ): Promise<{ entries: ChannelEntry[]; blob: Uint8Array }> {
    const { channel_values: values = {}, ...skeleton } = checkpoint;
    const versions = checkpoint.channel_versions ?? {};
    const carried = Object.keys(versions).filter((channel) => !(channel in newVersions));
    const [[skeletonType, skeletonBytes], parentEntries, entries] = await Promise.all([
      this.dump(skeleton, 'checkpoint'),
      carried.length > 0 && parentId !== null
        ? this.parentEntries(threadId, checkpointNs, parentId)
        : undefined,
      Promise.all(
        Object.entries(newVersions)
          .filter(([channel]) => channel in values)
          .map(async ([channel, version]): Promise<ChannelEntry> => {
            const [type, value] = await this.dump(
              values[channel],
              `checkpoint.channel_values.${channel}`,
            );
            return { channel, version: String(version), type, value };
          }),
      ),
    ]);
    if (parentEntries) {
      const byChannel = new Map(parentEntries.map((entry) => [entry.channel, entry]));
      for (const channel of carried) {
        const entry = byChannel.get(channel);
        if (entry && entry.version === String(versions[channel])) entries.push(entry);
      }
    }
    return {
      entries,
      blob: encodeCheckpointBlob({ skeletonType, skeleton: skeletonBytes, entries }),
    };
  }

  /** The channel entries of the parent: from the recent-puts cache, else read back. */
  private async parentEntries(
    threadId: string,
    checkpointNs: string,
    parentId: string,
  ): Promise<ChannelEntry[] | undefined> {
    const cached = this.recent.get(threadId, checkpointNs, parentId);
    if (cached) return cached;
    const blob = await guard('Cannot read parent checkpoint', () =>
      this.sql.checkpointBlob(threadId, checkpointNs, parentId),
    );
    if (!blob) return undefined;
    // Copies, so a child's cached entries never pin the whole parent blob.
    return decodeCheckpointBlob(blob).entries.map((entry) => ({
      ...entry,
      value: entry.value.slice(),
    }));
  }

  /** Serializes `value`; a value the serializer refuses is bad input named by `field`. */
  private async dump(value: unknown, field: string): Promise<[string, Uint8Array]> {
    try {
      return await this.serde.dumpsTyped(value);
    } catch (error) {
      throw invalid(
        field,
        `cannot be serialized (${error instanceof Error ? error.message : String(error)})`,
      );
    }
  }

  private async loadMetadata(row: CheckpointRow): Promise<CheckpointMetadata> {
    return (await this.serde.loadsTyped(row.type ?? 'json', row.metadata)) as CheckpointMetadata;
  }

  /**
   * Turns checkpoint rows and their writes into tuples. Pre-v4 checkpoints kept pending sends as
   * writes on their parent; they cost one more query, only when present.
   */
  private async toTuples(rows: CheckpointRow[], writes: WriteRow[]): Promise<CheckpointTuple[]> {
    if (rows.length === 0) return [];
    const writesByCheckpoint = groupWrites(writes);
    const checkpoints = await Promise.all(
      rows.map((row) =>
        this.loadCheckpoint(row.checkpoint).catch((error: unknown) => {
          throw new StorageError(
            'STORAGE_ERROR',
            `Cannot decode checkpoint ${row.checkpointId} of thread ${row.threadId}: ${String(error)}`,
            { cause: error },
          );
        }),
      ),
    );
    const legacy = rows.filter(
      (row, i) => row.parentCheckpointId !== null && (checkpoints[i]?.v ?? 4) < 4,
    );
    const sends =
      legacy.length > 0
        ? groupWrites(
            await guard('Cannot read pending sends', () =>
              this.sql.channelWrites(
                [...new Set(legacy.map((row) => row.threadId))],
                [...new Set(legacy.map((row) => row.parentCheckpointId ?? ''))],
                TASKS,
              ),
            ),
          )
        : undefined;
    return Promise.all(
      rows.map(async (row, i): Promise<CheckpointTuple> => {
        const checkpoint = checkpoints[i] as Checkpoint;
        if (sends && row.parentCheckpointId !== null && checkpoint.v < 4) {
          const parentSends =
            sends.get(writeKey(row.threadId, row.checkpointNs, row.parentCheckpointId)) ?? [];
          checkpoint.channel_values[TASKS] = await Promise.all(
            parentSends.map((write) => this.serde.loadsTyped(write.type ?? 'json', write.value)),
          );
          const existing = Object.values(checkpoint.channel_versions);
          checkpoint.channel_versions[TASKS] =
            existing.length > 0 ? maxChannelVersion(...existing) : this.getNextVersion(undefined);
        }
        const pendingWrites = await Promise.all(
          (
            writesByCheckpoint.get(writeKey(row.threadId, row.checkpointNs, row.checkpointId)) ?? []
          ).map(async (write): Promise<CheckpointPendingWrite> => [
            write.taskId,
            write.channel,
            await this.serde.loadsTyped(write.type ?? 'json', write.value),
          ]),
        );
        const tuple: CheckpointTuple = {
          config: {
            configurable: {
              thread_id: row.threadId,
              checkpoint_ns: row.checkpointNs,
              checkpoint_id: row.checkpointId,
            },
          },
          checkpoint,
          metadata: await this.loadMetadata(row),
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
        return tuple;
      }),
    );
  }

  private async loadCheckpoint(bytes: Uint8Array): Promise<Checkpoint> {
    const blob = decodeCheckpointBlob(bytes);
    const skeleton = (await this.serde.loadsTyped(blob.skeletonType, blob.skeleton)) as Omit<
      Checkpoint,
      'channel_values'
    >;
    const versions = skeleton.channel_versions ?? {};
    const channelValues: Record<string, unknown> = {};
    await Promise.all(
      blob.entries.map(async (entry) => {
        const version = versions[entry.channel];
        if (version === undefined || String(version) !== entry.version) return;
        channelValues[entry.channel] = await this.serde.loadsTyped(entry.type, entry.value.slice());
      }),
    );
    return {
      ...skeleton,
      channel_versions: { ...versions },
      versions_seen: skeleton.versions_seen ?? {},
      channel_values: channelValues,
    };
  }
}

/**
 * The channel entries of the checkpoint this saver stored last per (thread, namespace), so the
 * next `put` of that thread (whose parent it almost always is) copies the unchanged channels
 * without reading the parent back. It only ever returns what this process itself wrote for that
 * exact (thread, namespace, checkpoint id); bounded by thread count and bytes, oldest dropped.
 */
class RecentCheckpoints {
  private readonly byKey = new Map<
    string,
    { checkpointId: string; entries: ChannelEntry[]; bytes: number }
  >();
  private bytes = 0;

  constructor(
    private readonly maxThreads: number,
    private readonly maxBytes: number,
  ) {}

  get(threadId: string, checkpointNs: string, checkpointId: string): ChannelEntry[] | undefined {
    const hit = this.byKey.get(recentKey(threadId, checkpointNs));
    return hit?.checkpointId === checkpointId ? hit.entries : undefined;
  }

  remember(
    threadId: string,
    checkpointNs: string,
    checkpointId: string,
    entries: ChannelEntry[],
  ): void {
    const key = recentKey(threadId, checkpointNs);
    this.drop(key);
    const bytes = entries.reduce((sum, entry) => sum + entry.value.length, 0);
    if (bytes > this.maxBytes) return;
    this.byKey.set(key, { checkpointId, entries, bytes });
    this.bytes += bytes;
    for (const oldest of this.byKey.keys()) {
      if (this.byKey.size <= this.maxThreads && this.bytes <= this.maxBytes) break;
      this.drop(oldest);
    }
  }

  forgetThread(threadId: string): void {
    const prefix = recentKey(threadId, '');
    for (const key of [...this.byKey.keys()]) if (key.startsWith(prefix)) this.drop(key);
  }

  private drop(key: string): void {
    const entry = this.byKey.get(key);
    if (!entry) return;
    this.bytes -= entry.bytes;
    this.byKey.delete(key);
  }
}

/** NUL cannot occur in stored ids (see `assertStorableString`), so the key is unambiguous. */
function recentKey(threadId: string, checkpointNs: string): string {
  return `${threadId}\u0000${checkpointNs}`;
}

/** Groups writes by checkpoint, each group in `writesSortKey` order `(task_path, task_id, idx)`. */
function groupWrites(writes: WriteRow[]): Map<string, WriteRow[]> {
  const groups = new Map<string, WriteRow[]>();
  for (const write of writes) {
    const key = writeKey(write.threadId, write.checkpointNs, write.checkpointId);
    const group = groups.get(key);
    if (group) group.push(write);
    else groups.set(key, [write]);
  }
  for (const group of groups.values()) {
    group.sort((a, b) =>
      compareWritesSortKeys(
        writesSortKey(a.taskPath, a.taskId, a.idx),
        writesSortKey(b.taskPath, b.taskId, b.idx),
      ),
    );
  }
  return groups;
}

/**
 * The provider a Prisma client was generated for. Prisma keeps it on the client instance
 * (`_activeProvider`); callers that know the provider pass it explicitly instead.
 */
function providerOf(db: PrismaDb): DatabaseProvider {
  const provider = (db as unknown as { _activeProvider?: unknown })._activeProvider;
  if (provider === 'sqlite' || provider === 'postgresql') return provider;
  throw new StorageError(
    'STORAGE_ERROR',
    `Cannot tell the database provider of this Prisma client (${String(provider)}); pass options.provider`,
  );
}

/**
 * The reserved index of a special channel (error, interrupt, ...), else undefined. An own-property
 * check, so a channel named like an Object.prototype member is an ordinary channel.
 */
function specialIndex(channel: string): number | undefined {
  return Object.hasOwn(WRITES_IDX_MAP, channel) ? WRITES_IDX_MAP[channel] : undefined;
}

function writeKey(threadId: string, checkpointNs: string, checkpointId: string): string {
  return JSON.stringify([threadId, checkpointNs, checkpointId]);
}

function optionalString(value: unknown, field: string): string | undefined {
  if (value === undefined || value === null) return undefined;
  assertStorableString(value, field);
  return value;
}

/** Equality of JSON-like values: primitives by identity, arrays and objects structurally. */
function jsonEqual(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  if (typeof a !== 'object' || typeof b !== 'object' || a === null || b === null) return false;
  if (Array.isArray(a) !== Array.isArray(b)) return false;
  const aKeys = Object.keys(a);
  const bKeys = Object.keys(b);
  if (aKeys.length !== bKeys.length) return false;
  return aKeys.every((key) =>
    jsonEqual((a as Record<string, unknown>)[key], (b as Record<string, unknown>)[key]),
  );
}

function invalid(field: string, message: string): StorageError {
  const issues: FieldIssue[] = [{ path: field, message }];
  return new StorageError('VALIDATION_ERROR', `Invalid ${field}: ${message}`, { issues });
}
