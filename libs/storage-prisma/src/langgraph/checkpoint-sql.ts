import type { DatabaseProvider, PrismaDb, PrismaTx } from '../db';
import { Prisma } from '../generated/postgres/client';

/**
 * The SQL of the checkpointer. Reads are raw queries for speed: Prisma's driver adapters turn
 * every `Bytes` value into an array of numbers (slow for checkpoints of a few hundred KB), so
 * blobs are selected as hex text and decoded natively. Everything else is the dialect both
 * providers share (CTEs, `UNION ALL`, row values, `ON CONFLICT`).
 */

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
  limit?: number;
}

/** One union row: kind 0 is a checkpoint, kind 1 one of its writes. */
interface UnionRow {
  kind: number | bigint;
  thread_id: string;
  checkpoint_ns: string;
  checkpoint_id: string;
  /** parent_checkpoint_id (kind 0) or task_id (kind 1) */
  ref: string | null;
  type: string | null;
  data: string;
  meta: string | null;
  channel: string | null;
  idx: number | bigint;
  task_path: string | null;
}

interface RawWriteRow {
  thread_id: string;
  checkpoint_ns: string;
  checkpoint_id: string;
  task_id: string;
  idx: number | bigint;
  channel: string;
  type: string | null;
  data: string;
  task_path: string;
}

export class CheckpointSql {
  private readonly hex: (column: string) => Prisma.Sql;

  constructor(
    private readonly db: PrismaDb,
    provider: DatabaseProvider,
  ) {
    this.hex =
      provider === 'sqlite'
        ? (column) => Prisma.raw(`hex(${column})`)
        : (column) => Prisma.raw(`encode(${column}, 'hex')`);
  }

  /**
   * One checkpoint (the given id, else the thread's latest in the namespace) with its writes, in
   * one statement (so both halves see the same snapshot). A flat UNION prepares much faster than
   * the CTE of {@link checkpointsWithWrites}, which matters because the adapters prepare every
   * statement anew.
   */
  async checkpointWithWrites(
    threadId: string,
    checkpointNs: string,
    checkpointId: string | undefined,
  ): Promise<{ rows: CheckpointRow[]; writes: WriteRow[] }> {
    const target =
      checkpointId !== undefined
        ? Prisma.sql`checkpoint_id = ${checkpointId}`
        : Prisma.sql`checkpoint_id = (SELECT max(checkpoint_id) FROM checkpoints
            WHERE thread_id = ${threadId} AND checkpoint_ns = ${checkpointNs})`;
    const union = await this.db.$queryRaw<UnionRow[]>`
      SELECT 0 AS kind, thread_id, checkpoint_ns, checkpoint_id, parent_checkpoint_id AS ref, type,
        ${this.hex('checkpoint')} AS data, ${this.hex('metadata')} AS meta,
        NULL AS channel, 0 AS idx, NULL AS task_path
      FROM checkpoints
      WHERE thread_id = ${threadId} AND checkpoint_ns = ${checkpointNs} AND ${target}
      UNION ALL
      SELECT 1 AS kind, thread_id, checkpoint_ns, checkpoint_id, task_id AS ref, type,
        ${this.hex('value')} AS data, NULL AS meta, channel, idx, task_path
      FROM checkpoint_writes
      WHERE thread_id = ${threadId} AND checkpoint_ns = ${checkpointNs} AND ${target}`;
    return splitUnion(union);
  }

  /**
   * The checkpoints matching `query` in list order with all their writes, in one round trip.
   * Writes are returned unsorted.
   */
  async checkpointsWithWrites(
    query: CheckpointQuery,
  ): Promise<{ rows: CheckpointRow[]; writes: WriteRow[] }> {
    const conditions: Prisma.Sql[] = [];
    if (query.threadId !== undefined) conditions.push(Prisma.sql`thread_id = ${query.threadId}`);
    if (query.checkpointNs !== undefined) {
      conditions.push(Prisma.sql`checkpoint_ns = ${query.checkpointNs}`);
    }
    if (query.checkpointId !== undefined) {
      conditions.push(Prisma.sql`checkpoint_id = ${query.checkpointId}`);
    }
    if (query.before !== undefined) conditions.push(Prisma.sql`checkpoint_id < ${query.before}`);
    if (query.after !== undefined) {
      const { checkpointId, threadId, checkpointNs } = query.after;
      conditions.push(
        Prisma.sql`(checkpoint_id, thread_id, checkpoint_ns) < (${checkpointId}, ${threadId}, ${checkpointNs})`,
      );
    }
    const where =
      conditions.length > 0 ? Prisma.sql`WHERE ${Prisma.join(conditions, ' AND ')}` : Prisma.empty;
    const limit = query.limit !== undefined ? Prisma.sql`LIMIT ${query.limit}` : Prisma.empty;
    const union = await this.db.$queryRaw<UnionRow[]>`
      WITH cp AS (
        SELECT thread_id, checkpoint_ns, checkpoint_id, parent_checkpoint_id, type, checkpoint, metadata
        FROM checkpoints
        ${where}
        ORDER BY checkpoint_id DESC, thread_id DESC, checkpoint_ns DESC
        ${limit}
      )
      SELECT 0 AS kind, thread_id, checkpoint_ns, checkpoint_id, parent_checkpoint_id AS ref, type,
        ${this.hex('checkpoint')} AS data, ${this.hex('metadata')} AS meta,
        NULL AS channel, 0 AS idx, NULL AS task_path
      FROM cp
      UNION ALL
      SELECT 1 AS kind, w.thread_id, w.checkpoint_ns, w.checkpoint_id, w.task_id AS ref, w.type,
        ${this.hex('w.value')} AS data, NULL AS meta, w.channel, w.idx, w.task_path
      FROM checkpoint_writes w
      JOIN cp ON w.thread_id = cp.thread_id AND w.checkpoint_ns = cp.checkpoint_ns
        AND w.checkpoint_id = cp.checkpoint_id
      ORDER BY kind, checkpoint_id DESC, thread_id DESC, checkpoint_ns DESC`;
    return splitUnion(union);
  }

  /** The writes of one channel on the given checkpoints (a superset: callers match exact keys). */
  async channelWrites(
    threadIds: string[],
    checkpointIds: string[],
    channel: string,
  ): Promise<WriteRow[]> {
    const rows = await this.db.$queryRaw<RawWriteRow[]>`
      SELECT thread_id, checkpoint_ns, checkpoint_id, task_id, idx, channel, type,
        ${this.hex('value')} AS data, task_path
      FROM checkpoint_writes
      WHERE channel = ${channel}
        AND thread_id IN (${Prisma.join(threadIds)})
        AND checkpoint_id IN (${Prisma.join(checkpointIds)})`;
    return rows.map((row) => ({
      threadId: row.thread_id,
      checkpointNs: row.checkpoint_ns,
      checkpointId: row.checkpoint_id,
      taskId: row.task_id,
      idx: Number(row.idx),
      channel: row.channel,
      type: row.type,
      value: fromHex(row.data),
      taskPath: row.task_path,
    }));
  }

  /** The stored `checkpoint` blob of one checkpoint, or undefined. */
  async checkpointBlob(
    threadId: string,
    checkpointNs: string,
    checkpointId: string,
  ): Promise<Uint8Array | undefined> {
    const rows = await this.db.$queryRaw<{ data: string }[]>`
      SELECT ${this.hex('checkpoint')} AS data FROM checkpoints
      WHERE thread_id = ${threadId} AND checkpoint_ns = ${checkpointNs}
        AND checkpoint_id = ${checkpointId}`;
    const row = rows[0];
    return row ? fromHex(row.data) : undefined;
  }

  upsertCheckpoint(client: PrismaDb | PrismaTx, row: CheckpointRow): Promise<number> {
    return client.$executeRaw`
      INSERT INTO checkpoints
        (thread_id, checkpoint_ns, checkpoint_id, parent_checkpoint_id, type, checkpoint, metadata)
      VALUES (${row.threadId}, ${row.checkpointNs}, ${row.checkpointId}, ${row.parentCheckpointId},
        ${row.type}, ${row.checkpoint}, ${row.metadata})
      ON CONFLICT (thread_id, checkpoint_ns, checkpoint_id) DO UPDATE SET
        parent_checkpoint_id = excluded.parent_checkpoint_id,
        type = excluded.type,
        checkpoint = excluded.checkpoint,
        metadata = excluded.metadata`;
  }

  /**
   * Inserts writes in one statement: `replace` overwrites rows with the same
   * `(thread, ns, checkpoint, task, idx)`, otherwise existing rows win.
   */
  insertWrites(rows: WriteRow[], replace: boolean): Promise<number> {
    const values = rows.map(
      (row) =>
        Prisma.sql`(${row.threadId}, ${row.checkpointNs}, ${row.checkpointId}, ${row.taskId},
          ${row.idx}, ${row.channel}, ${row.type}, ${row.value}, ${row.taskPath})`,
    );
    const onConflict = replace
      ? Prisma.sql`DO UPDATE SET channel = excluded.channel, type = excluded.type,
          value = excluded.value, task_path = excluded.task_path`
      : Prisma.sql`DO NOTHING`;
    return this.db.$executeRaw`
      INSERT INTO checkpoint_writes
        (thread_id, checkpoint_ns, checkpoint_id, task_id, idx, channel, type, value, task_path)
      VALUES ${Prisma.join(values)}
      ON CONFLICT (thread_id, checkpoint_ns, checkpoint_id, task_id, idx) ${onConflict}`;
  }
}

function splitUnion(union: UnionRow[]): { rows: CheckpointRow[]; writes: WriteRow[] } {
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
        checkpoint: fromHex(row.data),
        metadata: fromHex(row.meta ?? ''),
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
        value: fromHex(row.data),
        taskPath: row.task_path ?? '',
      });
    }
  }
  return { rows, writes };
}

function fromHex(hex: string): Uint8Array {
  // A fresh Uint8Array (not a Buffer, which may share Node's pool) owning its bytes.
  return new Uint8Array(Buffer.from(hex, 'hex'));
}
