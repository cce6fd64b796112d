import type { RunFence } from '@cognition/storage';
import { runFenceOf, StorageError } from '@cognition/storage';
import type { RunnableConfig } from '@langchain/core/runnables';
import { BaseCheckpointSaver } from '@langchain/langgraph-checkpoint';
import type {
  ChannelVersions,
  Checkpoint,
  CheckpointListOptions,
  CheckpointMetadata,
  CheckpointTuple,
  PendingWrite,
  SerializerProtocol,
} from '@langchain/langgraph-checkpoint';
import type pg from 'pg';
import type { DatabaseProvider, PrismaDb } from '../db/db';
import { guard } from '../db/errors';
import type { SqliteSession } from '../db/sqlite-connection';
import { decodeCheckpointBlob, foreignHolders } from './checkpoint-codec';
import type {
  CheckpointRow,
  CheckpointSql,
  GuardedWrites,
  ListCursor,
  TransactionHook,
  WriteRow,
} from './sql/checkpoint-sql';
import { checkpointSql, providerOf } from './sql/open-checkpoint-sql';
import type { KnownEntry } from './list-channels';
import { CheckpointReader } from './checkpoint-reader';
import type { MessagesBase } from './checkpoint-dump';
import { dumpCheckpoint } from './checkpoint-dump';
import { RecentCheckpoints } from './recent-checkpoints';
import { HeldWrites } from './held-writes';
import { invalid, jsonEqual, optionalString, specialIndex } from './saver-input';
import { assertStorableString } from './namespace';

/** The root checkpoint a {@link RootCheckpointHook} is called for. */
export interface RootCheckpoint {
  threadId: string;
  checkpointId: string;
  /** The full checkpoint LangGraph passed to `put` (every channel value, not only the changed). */
  checkpoint: Checkpoint;
  /**
   * Set when the saver knows how the `messages` channel relates to another checkpoint's: its
   * first `kept` entries are those of checkpoint `checkpointId` (the parent), the rest are new.
   * A hook that already reflects that checkpoint then has only the rest to apply.
   */
  messagesBase?: MessagesBase;
}

/**
 * Called inside the transaction of every `put` of a root checkpoint (`checkpoint_ns === ''`),
 * after the checkpoint row is written, on the driver connection holding that transaction: the
 * method of the database's provider runs. Throwing rolls the checkpoint back with everything the
 * hook wrote, so whatever it maintains (the message projection) can never drift from the
 * checkpoints. No Prisma client is involved: the put runs no statement through Prisma's query
 * engine, whose per-statement cost was most of a hooked put.
 */
export interface RootCheckpointHook {
  /** Runs synchronously inside the put's better-sqlite3 transaction, under the connection lock. */
  sqlite(session: SqliteSession, put: RootCheckpoint): void;
  /** Runs on the pool client holding the put's transaction (between BEGIN and COMMIT). */
  postgresql(client: pg.PoolClient, put: RootCheckpoint): Promise<void>;
  /**
   * Optional, PostgreSQL: the hook's writes planned ahead, joined to the upsert's statement
   * (`GuardedWrites` of `sql/checkpoint-sql.ts`); when they do not apply, `postgresql` runs.
   */
  postgresqlPlan?(pool: pg.Pool, put: RootCheckpoint): Promise<GuardedWrites | undefined>;
}

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

/** Puts retried after the checkpoints they referred to were deleted, before giving up. */
const MAX_PUT_ATTEMPTS = 3;

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
 * - `putWrites` of regular writes resolves once they are committed: with the put of their
 *   checkpoint's child when it comes while they are held, else on their own ({@link HeldWrites});
 * - pending writes come back in `writesSortKey` order `(task_path, task_id, idx)`;
 * - every failure is a StorageError: VALIDATION_ERROR naming the config field, or the
 *   translated database error.
 */
export class PrismaCheckpointSaver extends BaseCheckpointSaver {
  private readonly onRootCheckpoint: RootCheckpointHook | undefined;
  private readonly sql: CheckpointSql;
  private readonly recent = new RecentCheckpoints(RECENT_MAX_THREADS, RECENT_MAX_BYTES);
  private readonly reader: CheckpointReader;
  private readonly held: HeldWrites;

  constructor(db: PrismaDb, options: PrismaCheckpointSaverOptions = {}) {
    super(options.serde);
    this.onRootCheckpoint = options.onRootCheckpoint;
    this.sql = checkpointSql(db, options.provider ?? providerOf(db));
    this.reader = new CheckpointReader(this.serde, this.sql, () => this.getNextVersion(undefined));
    this.held = new HeldWrites((rows, fence) =>
      guard('Cannot store checkpoint writes', () => this.sql.insertWrites(rows, false, fence)),
    );
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
    await this.held.settle(threadId);
    const { rows, writes } = await guard('Cannot read checkpoint', () =>
      this.sql.checkpointWithWrites(threadId, checkpointNs, checkpointId || undefined),
    );
    const row = rows[0];
    if (!row) return undefined;
    // A read of the latest checkpoint is how a run starts: its child is written against the
    // values handed out here. Reads of a given id (time travel, history) are left out, so what
    // their callers do with the values never matters to the next put.
    const latest = !checkpointId;
    const { tuple, known } = await this.reader.toTuple(
      row,
      this.reader.writesOf(row, writes),
      new Map(),
      [],
      latest,
    );
    if (latest) this.recent.remember(threadId, checkpointNs, row.checkpointId, known);
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

    await this.held.settle(threadId);
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
          rows.map(async (row) => (await this.reader.metadataOf(row)) as Record<string, unknown>),
        );
        selected = rows.filter((_, i) =>
          filter.every(([key, value]) => jsonEqual(metadata[i]?.[key], value)),
        );
        selected = selected.slice(0, remaining);
      }
      yield* this.reader.tuples(selected, writes);
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

    const fence = runFenceOf(config);
    // Taken first, before anything that could wait for the event loop's next turn: the
    // parent's writes held since this put's step ended go with it.
    const carried =
      parentId !== null ? this.held.take(threadId, checkpointNs, parentId, fence) : undefined;
    this.held.beginPut(threadId);
    try {
      const [metadataType, metadataBytes] = await this.dump(metadata, 'metadata');
      await this.putAttempts(threadId, checkpointNs, parentId, checkpoint, newVersions, {
        metadataType,
        metadataBytes,
        hook: checkpointNs === '' ? this.onRootCheckpoint : undefined,
        fence,
        carried: carried ? await carried.rows : [],
      });
      this.held.done(carried);
    } catch (error) {
      // The parent's writes are stored on their own, as they would have been without this put.
      this.held.giveBack(carried);
      throw error;
    } finally {
      this.held.endPut(threadId);
    }
    return {
      configurable: {
        thread_id: threadId,
        checkpoint_ns: checkpointNs,
        checkpoint_id: checkpoint.id,
      },
    };
  }

  private async putAttempts(
    threadId: string,
    checkpointNs: string,
    parentId: string | null,
    checkpoint: Checkpoint,
    newVersions: ChannelVersions,
    put: {
      metadataType: string;
      metadataBytes: Uint8Array;
      hook: RootCheckpointHook | undefined;
      fence: RunFence | undefined;
      carried: WriteRow[];
    },
  ): Promise<void> {
    const { metadataType, metadataBytes, hook } = put;
    // A first attempt refers to the segments of the parent as this process last saw it; when
    // retention deleted one of those checkpoints meanwhile, the parent as stored now is used.
    for (let attempt = 1; ; attempt += 1) {
      const fromCache = attempt === 1;
      const { known, blob, messagesBase } = await dumpCheckpoint(
        checkpoint,
        newVersions,
        parentId,
        parentId !== null
          ? this.parentEntries(threadId, checkpointNs, parentId, fromCache)
          : undefined,
        (value, field) => this.dump(value, field),
      );
      const row: CheckpointRow = {
        threadId,
        checkpointNs,
        checkpointId: checkpoint.id,
        parentCheckpointId: parentId,
        type: metadataType,
        checkpoint: blob,
        metadata: metadataBytes,
      };
      const root: RootCheckpoint = {
        threadId,
        checkpointId: checkpoint.id,
        checkpoint,
        ...(messagesBase ? { messagesBase } : {}),
      };
      const bound: TransactionHook | undefined = hook && {
        sqlite: (session) => hook.sqlite(session, root),
        postgresql: (client) => hook.postgresql(client, root),
        postgresqlPlan: (pool) => hook.postgresqlPlan?.(pool, root) ?? Promise.resolve(undefined),
      };
      // Only root checkpoints are ever deleted while others of their namespace remain
      // (retention); a subgraph namespace goes whole (thread delete) or newest first (rollback).
      const holders = checkpointNs === '' ? foreignHolders(known, checkpoint.id) : [];
      const stored = await guard('Cannot store checkpoint', () =>
        this.sql.putCheckpoint(row, bound, holders, put.fence, put.carried),
      );
      if (stored) {
        this.recent.remember(threadId, checkpointNs, checkpoint.id, known);
        return;
      }
      if (attempt === MAX_PUT_ATTEMPTS) {
        throw new StorageError(
          'STORAGE_ERROR',
          `Cannot store checkpoint ${checkpoint.id}: the checkpoints it builds on keep being deleted`,
        );
      }
    }
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

    // A batch made only of special writes (error, interrupt, ...) replaces the task's previous
    // ones; regular writes are first-wins, so a retried task cannot change what was recorded.
    const replace = writes.every(([channel]) => specialIndex(channel) !== undefined);
    const rows = Promise.all(
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
    if (replace) {
      const special = await rows;
      await guard('Cannot store checkpoint writes', () =>
        this.sql.insertWrites(special, true, runFenceOf(config)),
      );
      return;
    }
    // Held (at once, so a put called right after takes them) for the put that follows.
    const stored = this.held.hold(threadId, checkpointNs, checkpointId, runFenceOf(config), rows);
    try {
      await rows;
    } catch (error) {
      // Not serializable: nothing of this call is stored; the others held with it go on.
      stored.catch(() => undefined);
      throw error;
    }
    await stored;
  }

  /**
   * Forgets what this saver remembers of `threadId` (the checkpoint its next put would build
   * on), for a delete of its rows that does not go through {@link deleteThread}: a session's.
   */
  forgetThread(threadId: string): void {
    this.recent.forgetThread(threadId);
  }

  async deleteThread(threadId: string): Promise<void> {
    assertStorableString(threadId, 'threadId');
    this.forgetThread(threadId);
    await this.held.settle(threadId);
    await guard('Cannot delete thread checkpoints', () => this.sql.deleteThread(threadId));
  }

  /**
   * The channel entries of the parent: from the recent-puts cache, else read back (then array
   * values are known by their segment references only, not their items).
   */
  private async parentEntries(
    threadId: string,
    checkpointNs: string,
    parentId: string,
    fromCache: boolean,
  ): Promise<KnownEntry[] | undefined> {
    const cached = fromCache ? this.recent.get(threadId, checkpointNs, parentId) : undefined;
    if (cached) return cached;
    const blob = await guard('Cannot read parent checkpoint', () =>
      this.sql.checkpointBlob(threadId, checkpointNs, parentId),
    );
    if (!blob) return undefined;
    // Copies, so a child's cached entries never pin the whole parent blob.
    return decodeCheckpointBlob(blob).entries.map((entry): KnownEntry =>
      entry.kind === 'value' ? { ...entry, value: entry.value.slice() } : { ...entry, bytes: 0 },
    );
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
}
