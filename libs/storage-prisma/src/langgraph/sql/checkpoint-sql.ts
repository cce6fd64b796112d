import type { RunFence } from '@cognition/storage';
import type pg from 'pg';
import type { SqliteSession } from '../../db/sqlite-connection';

/**
 * The SQL of the checkpointer, one implementation per provider behind {@link CheckpointSql},
 * both talking to the driver under the Prisma client directly:
 *
 * - SQLite (`SqliteCheckpointSql`): prepared better-sqlite3 statements on the client's own
 *   connection, under its lock (see `sqlite-connection.ts`);
 * - PostgreSQL (`PostgresCheckpointSql`): node-postgres named (prepared) statements on the
 *   client's pool.
 *
 * Nothing goes through Prisma's query engine, whose per-query cost (the query interpreter, parameters JSON-encoded with bytes as base64, a fresh
 * `prepare` per call on SQLite, blobs returned as arrays of numbers) was most of the time of an
 * operation: ~1.3 ms of CPU to upsert a 25 KB checkpoint on PostgreSQL, against ~0.2 ms through
 * node-postgres. Both use the dialect the providers share (CTEs, `UNION ALL`, row values,
 * `ON CONFLICT`).
 */
export interface CheckpointSql {
  /**
   * One checkpoint (the given id, else the thread's latest in the namespace) with its writes, in
   * one statement, so both halves see the same snapshot.
   */
  checkpointWithWrites(
    threadId: string,
    checkpointNs: string,
    checkpointId: string | undefined,
  ): Promise<{ rows: CheckpointRow[]; writes: WriteRow[] }>;
  /** The checkpoints matching `query` in list order with all their writes (unsorted). */
  checkpointsWithWrites(
    query: CheckpointQuery,
  ): Promise<{ rows: CheckpointRow[]; writes: WriteRow[] }>;
  /** The writes of one channel on one checkpoint, unsorted. */
  channelWrites(
    threadId: string,
    checkpointNs: string,
    checkpointId: string,
    channel: string,
  ): Promise<WriteRow[]>;
  /** The stored `checkpoint` blob of one checkpoint, or undefined. */
  checkpointBlob(
    threadId: string,
    checkpointNs: string,
    checkpointId: string,
  ): Promise<Uint8Array | undefined>;
  /** The stored `checkpoint` blobs of the given checkpoints that exist, by id. */
  checkpointBlobs(
    threadId: string,
    checkpointNs: string,
    checkpointIds: readonly string[],
  ): Promise<Map<string, Uint8Array>>;
  /**
   * Upserts the checkpoint row, unless a checkpoint of `holders` (same thread and namespace:
   * the ones whose segments the row refers to) does not exist: then nothing is written and the
   * result is false. The holders are locked against deletion until the row commits. With
   * `hook`, in one transaction on one connection: the check, the upsert, then the hook of the
   * provider; a throwing hook rolls everything back. `writes` (regular writes of the parent,
   * insert-or-ignore) are stored with the row, in its statement or transaction: both or neither.
   */
  putCheckpoint(
    row: CheckpointRow,
    hook: TransactionHook | undefined,
    holders: readonly string[],
    fence?: RunFence,
    writes?: readonly WriteRow[],
  ): Promise<boolean>;
  /**
   * Inserts writes atomically: `replace` overwrites rows with the same
   * `(thread, ns, checkpoint, task, idx)`, otherwise existing rows win.
   *
   * With `fence` (either method), the write is stored only while its run is held under it,
   * checked in the write's own statement or transaction: otherwise RunFencedError, nothing
   * written.
   */
  insertWrites(rows: WriteRow[], replace: boolean, fence?: RunFence): Promise<void>;
  /** Deletes the thread's writes and checkpoints (every namespace) in one transaction. */
  deleteThread(threadId: string): Promise<void>;
}

/** Work joined to a put's transaction, given the connection that holds it. */
export interface TransactionHook {
  /** Runs synchronously inside the better-sqlite3 transaction. */
  sqlite(session: SqliteSession): void;
  /** Runs on the pool client between its BEGIN and COMMIT. */
  postgresql(client: pg.PoolClient): Promise<void>;
  /**
   * Optional, PostgreSQL: the hook's writes planned from a read without any lock, to run in
   * the upsert's own statement (see {@link GuardedWrites}); undefined when they cannot be.
   */
  postgresqlPlan?(pool: pg.Pool): Promise<GuardedWrites | undefined>;
}

/**
 * A hook's writes as common table expressions joined to the checkpoint upsert, so the put is
 * one statement (one round trip, no BEGIN/COMMIT) instead of a transaction of six or more.
 * They must define a CTE `guard` that returns a row when, and only when, every write applies:
 * its WHERE includes `EXISTS (SELECT 1 FROM pre)` (the put's own precondition: the holders
 * exist, locked) and whatever proves the plan's read still current; every other CTE writes only
 * `WHERE EXISTS (SELECT 1 FROM guard)`. The checkpoint row is written only with them: a put
 * whose guard returns nothing writes nothing and runs as a transaction with `postgresql`.
 */
export interface GuardedWrites {
  /** Distinguishes the statement's text (one named prepared statement per name). */
  name: string;
  /**
   * The CTEs, their parameters numbered from `first`. `guard` returns a text column `version`
   * (the version of the row it guards on as the statement leaves it, e.g. its new `xmin`).
   */
  ctes(first: number): string;
  values: unknown[];
  /**
   * `remembered`: planned without a read, from what this process's last write left; when the
   * guard refuses such a plan the put asks for a plan again (which then reads) before it takes
   * the locked path. `read` (the default): planned from a read.
   */
  planned?: 'read' | 'remembered';
  /** Called when the statement wrote, with the `version` its `guard` returned. */
  applied?(version: string): void;
}

export interface CheckpointRow {
  threadId: string;
  checkpointNs: string;
  checkpointId: string;
  parentCheckpointId: string | null;
  type: string | null;
  checkpoint: Uint8Array;
  metadata: Uint8Array;
}

export interface WriteRow {
  threadId: string;
  checkpointNs: string;
  checkpointId: string;
  taskId: string;
  idx: number;
  channel: string;
  type: string | null;
  value: Uint8Array;
  taskPath: string;
}

/** Position of a row in the list order `(checkpoint_id, thread_id, checkpoint_ns)` descending. */
export interface ListCursor {
  threadId: string;
  checkpointNs: string;
  checkpointId: string;
}

export interface CheckpointQuery {
  threadId?: string;
  checkpointNs?: string;
  checkpointId?: string;
  /** Only checkpoints whose id sorts before this one. */
  before?: string;
  /** Only rows after this one in list order. */
  after?: ListCursor;
  limit: number;
}

/** One union row: kind 0 is a checkpoint, kind 1 one of its writes. */
export interface UnionRow<Bytes> {
  kind: number | bigint;
  thread_id: string;
  checkpoint_ns: string;
  checkpoint_id: string;
  /** parent_checkpoint_id (kind 0) or task_id (kind 1) */
  ref: string | null;
  type: string | null;
  data: Bytes;
  meta: Bytes | null;
  channel: string | null;
  idx: number | bigint;
  task_path: string | null;
}

export interface RawWriteRow<Bytes> {
  thread_id: string;
  checkpoint_ns: string;
  checkpoint_id: string;
  task_id: string;
  idx: number | bigint;
  channel: string;
  type: string | null;
  data: Bytes;
  task_path: string;
}

/** Splits union rows into checkpoints and writes; `bytes` turns a blob column into bytes. */
export function splitUnion<Bytes>(
  union: UnionRow<Bytes>[],
  bytes: (data: Bytes) => Uint8Array,
): { rows: CheckpointRow[]; writes: WriteRow[] } {
  const rows: CheckpointRow[] = [];
  const writes: WriteRow[] = [];
  for (const row of union) {
    if (Number(row.kind) === 0) {
      rows.push({
        threadId: row.thread_id,
        checkpointNs: row.checkpoint_ns,
        checkpointId: row.checkpoint_id,
        parentCheckpointId: row.ref,
        type: row.type,
        checkpoint: bytes(row.data),
        metadata: row.meta === null ? new Uint8Array() : bytes(row.meta),
      });
    } else {
      writes.push({
        threadId: row.thread_id,
        checkpointNs: row.checkpoint_ns,
        checkpointId: row.checkpoint_id,
        taskId: row.ref ?? '',
        idx: Number(row.idx),
        channel: row.channel ?? '',
        type: row.type,
        value: bytes(row.data),
        taskPath: row.task_path ?? '',
      });
    }
  }
  return { rows, writes };
}

export function toWriteRow<Bytes>(
  row: RawWriteRow<Bytes>,
  bytes: (data: Bytes) => Uint8Array,
): WriteRow {
  return {
    threadId: row.thread_id,
    checkpointNs: row.checkpoint_ns,
    checkpointId: row.checkpoint_id,
    taskId: row.task_id,
    idx: Number(row.idx),
    channel: row.channel,
    type: row.type,
    value: bytes(row.data),
    taskPath: row.task_path,
  };
}

/**
 * A driver's Buffer as a Uint8Array owning its memory: a view when the Buffer spans its whole
 * ArrayBuffer, else a copy (small Buffers share Node's pool with unrelated data, which a caller
 * could reach through `.buffer`).
 */
export function ownBytes(buffer: Buffer): Uint8Array {
  return buffer.byteOffset === 0 && buffer.byteLength === buffer.buffer.byteLength
    ? new Uint8Array(buffer.buffer, 0, buffer.byteLength)
    : new Uint8Array(buffer);
}
