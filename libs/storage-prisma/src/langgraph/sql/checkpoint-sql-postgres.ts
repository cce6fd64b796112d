import type pg from 'pg';
import type { RunFence } from '@cognition/storage';
import { RunFencedError } from '@cognition/storage';
import { inPostgresTransaction } from '../../db/raw-connections';
import type {
  CheckpointQuery,
  CheckpointRow,
  CheckpointSql,
  RawWriteRow,
  TransactionHook,
  UnionRow,
  WriteRow,
} from './checkpoint-sql';
import { ownBytes, splitUnion, toWriteRow } from './checkpoint-sql';

function checkpointWithWritesSql(target: string): string {
  return `
    SELECT 0 AS kind, thread_id, checkpoint_ns, checkpoint_id, parent_checkpoint_id AS ref, type,
      checkpoint AS data, metadata AS meta, NULL AS channel, 0 AS idx, NULL AS task_path
    FROM checkpoints
    WHERE thread_id = $1 AND checkpoint_ns = $2 AND checkpoint_id = ${target}
    UNION ALL
    SELECT 1 AS kind, thread_id, checkpoint_ns, checkpoint_id, task_id AS ref, type,
      value AS data, NULL AS meta, channel, idx, task_path
    FROM checkpoint_writes
    WHERE thread_id = $1 AND checkpoint_ns = $2 AND checkpoint_id = ${target}`;
}

/**
 * Statements with a fixed text run as named (server-side prepared) statements: parsed and
 * planned once per pooled connection. Names are unique per text.
 */
const CHECKPOINT_BY_ID = {
  name: 'cognition_checkpoint_by_id',
  text: checkpointWithWritesSql('$3'),
};
const LATEST_CHECKPOINT = {
  name: 'cognition_checkpoint_latest',
  text: checkpointWithWritesSql(`(SELECT max(checkpoint_id) FROM checkpoints
    WHERE thread_id = $1 AND checkpoint_ns = $2)`),
};
const CHECKPOINT_BLOB = {
  name: 'cognition_checkpoint_blob',
  text: `SELECT checkpoint AS data FROM checkpoints
    WHERE thread_id = $1 AND checkpoint_ns = $2 AND checkpoint_id = $3`,
};
const CHANNEL_WRITES = {
  name: 'cognition_channel_writes',
  text: `SELECT thread_id, checkpoint_ns, checkpoint_id, task_id, idx, channel, type,
      value AS data, task_path
    FROM checkpoint_writes
    WHERE thread_id = $1 AND checkpoint_ns = $2 AND checkpoint_id = $3 AND channel = $4`,
};
/**
 * The checkpoint row's upsert ($1–$7: thread, namespace, id, parent, type, checkpoint, metadata),
 * written only when `guard` (an SQL condition) holds, when one is given.
 */
function upsertCheckpointRow(guard?: string): string {
  const source = guard
    ? `SELECT $1::text, $2::text, $3::text, $4::text, $5::text, $6::bytea, $7::bytea WHERE ${guard}`
    : 'VALUES ($1, $2, $3, $4, $5, $6, $7)';
  return `INSERT INTO checkpoints
    (thread_id, checkpoint_ns, checkpoint_id, parent_checkpoint_id, type, checkpoint, metadata)
  ${source}
  ON CONFLICT (thread_id, checkpoint_ns, checkpoint_id) DO UPDATE SET
    parent_checkpoint_id = excluded.parent_checkpoint_id,
    type = excluded.type,
    checkpoint = excluded.checkpoint,
    metadata = excluded.metadata`;
}
const UPSERT_CHECKPOINT = {
  name: 'cognition_upsert_checkpoint',
  text: `
  ${upsertCheckpointRow()}`,
};

/**
 * Run fencing: true when there is no fence ($n null) or the run is held under it ($n run id,
 * $n+1 owner, $n+2 claim number); the run row is then share-locked until the statement's
 * transaction commits, so a claim waits for the write or the write sees the claim.
 */
function fenceHolds(n: number): string {
  return `($${n}::text IS NULL OR EXISTS (SELECT 1 FROM runs WHERE id = $${n}::text
    AND owner_node = $${n + 1}::text AND lease_attempt = $${n + 2}::int FOR SHARE))`;
}
const FENCE_HOLDS = {
  name: 'cognition_fence_holds',
  text: `SELECT 1 AS held WHERE ${fenceHolds(1)}`,
};

function fenceValues(fence: RunFence | undefined): unknown[] {
  return [fence?.runId ?? null, fence?.ownerNode ?? null, fence?.claim ?? null];
}

/** The fence checked inside a transaction (the run row share-locked until it commits). */
async function checkFence(client: pg.PoolClient, fence: RunFence | undefined): Promise<void> {
  if (!fence) return;
  const held = await client.query({ ...FENCE_HOLDS, values: fenceValues(fence) });
  if (held.rowCount === 0) throw new RunFencedError([fence.runId]);
}

/** UPSERT_CHECKPOINT under a fence ($8–$10): no row written (and none returned) when it fails. */
const UPSERT_CHECKPOINT_FENCED = {
  name: 'cognition_upsert_checkpoint_fenced',
  text: `
  ${upsertCheckpointRow(fenceHolds(8))}
  RETURNING 1`,
};

/**
 * The parent's regular writes a put carries (`checkpoint_writes` columns as arrays from `$first`,
 * see {@link writeColumns}), inserted-or-ignored only when `condition` holds.
 */
function carriedWritesCte(first: number, condition: string): string {
  const p = (i: number): string => `$${first + i}`;
  return `carried AS (
    INSERT INTO checkpoint_writes
      (thread_id, checkpoint_ns, checkpoint_id, task_id, idx, channel, type, value, task_path)
    SELECT * FROM unnest(${p(0)}::text[], ${p(1)}::text[], ${p(2)}::text[], ${p(3)}::text[],
      ${p(4)}::int[], ${p(5)}::text[], ${p(6)}::text[], ${p(7)}::bytea[], ${p(8)}::text[])
    WHERE ${condition}
    ON CONFLICT (thread_id, checkpoint_ns, checkpoint_id, task_id, idx) DO NOTHING
  )`;
}

/** The columns of write rows as the nine arrays the write statements take. */
function writeColumns(rows: readonly WriteRow[]): unknown[] {
  return [
    rows.map((row) => row.threadId),
    rows.map((row) => row.checkpointNs),
    rows.map((row) => row.checkpointId),
    rows.map((row) => row.taskId),
    rows.map((row) => row.idx),
    rows.map((row) => row.channel),
    rows.map((row) => row.type),
    rows.map((row) => row.value),
    rows.map((row) => row.taskPath),
  ];
}

/**
 * UPSERT_CHECKPOINT with the parent's writes it carries ($11–$19), both under the fence
 * ($8–$10, none when null): one statement, so they commit together; no row returned when the
 * fence fails.
 */
const UPSERT_CHECKPOINT_CARRYING = {
  name: 'cognition_upsert_checkpoint_carrying',
  text: `
  WITH fence AS (SELECT 1 AS held WHERE ${fenceHolds(8)}),
  ${carriedWritesCte(11, 'EXISTS (SELECT 1 FROM fence)')}
  ${upsertCheckpointRow('EXISTS (SELECT 1 FROM fence)')}
  RETURNING 1`,
};

/**
 * A put with a hook's `GuardedWrites`: `pre` holds a row when every holder exists (and
 * locks them as LOCK_HOLDERS does) and the run fence holds, the hook's CTEs follow, and the
 * checkpoint row and the parent's writes it carries are written only when their `guard`
 * returns one. Parameters $1–$7 are the row, $8 the holders, $9–$11 the fence, $12–$20 the
 * carried writes (empty arrays when none).
 */
function guardedPutSql(ctes: string): string {
  return `
  WITH pre AS (
    SELECT 1 WHERE (SELECT count(*) FROM (SELECT checkpoint_id FROM checkpoints
      WHERE thread_id = $1::text AND checkpoint_ns = $2::text AND checkpoint_id = ANY($8::text[])
      FOR KEY SHARE) h) = cardinality($8::text[])
      AND ${fenceHolds(9)}
  ),
  ${ctes},
  put AS (
    ${upsertCheckpointRow('EXISTS (SELECT 1 FROM guard)')}
  ),
  ${carriedWritesCte(12, 'EXISTS (SELECT 1 FROM guard)')}
  SELECT count(*)::int AS done, max(version) AS version FROM guard`;
}
const GUARDED_FIRST_PARAM = 21;

/**
 * One statement for any number of rows: the columns travel as arrays. $10–$12 the fence: the
 * rows are inserted only when it holds, and the statement answers whether it did.
 */
function insertWritesSql(onConflict: string): string {
  return `
    WITH fence AS (SELECT 1 AS held WHERE ${fenceHolds(10)}),
    inserted AS (
      INSERT INTO checkpoint_writes
        (thread_id, checkpoint_ns, checkpoint_id, task_id, idx, channel, type, value, task_path)
      SELECT * FROM unnest($1::text[], $2::text[], $3::text[], $4::text[], $5::int[], $6::text[],
        $7::text[], $8::bytea[], $9::text[])
      WHERE EXISTS (SELECT 1 FROM fence)
      ON CONFLICT (thread_id, checkpoint_ns, checkpoint_id, task_id, idx) ${onConflict}
    )
    SELECT held FROM fence`;
}
const INSERT_WRITES_KEEP = {
  name: 'cognition_insert_writes_keep',
  text: insertWritesSql('DO NOTHING'),
};
const INSERT_WRITES_REPLACE = {
  name: 'cognition_insert_writes_replace',
  text: insertWritesSql(`DO UPDATE SET channel = excluded.channel, type = excluded.type,
    value = excluded.value, task_path = excluded.task_path`),
};
const CHECKPOINT_BLOBS = {
  name: 'cognition_checkpoint_blobs',
  text: `SELECT checkpoint_id, checkpoint AS data FROM checkpoints
    WHERE thread_id = $1 AND checkpoint_ns = $2 AND checkpoint_id = ANY($3::text[])`,
};
/** The checkpoints a put refers to, locked so retention cannot delete them before it commits. */
const LOCK_HOLDERS = {
  name: 'cognition_lock_holders',
  text: `SELECT checkpoint_id FROM checkpoints
    WHERE thread_id = $1 AND checkpoint_ns = $2 AND checkpoint_id = ANY($3::text[])
    FOR KEY SHARE`,
};
/** Both deletes in one statement, so they commit together. */
const DELETE_THREAD = {
  name: 'cognition_delete_thread',
  text: `WITH writes AS (DELETE FROM checkpoint_writes WHERE thread_id = $1)
    DELETE FROM checkpoints WHERE thread_id = $1`,
};

/**
 * The checkpointer's SQL on PostgreSQL: node-postgres queries on the pool under the Prisma
 * client (the same connections), one statement per operation. Prisma's per-query cost (the
 * query interpreter, parameters JSON-encoded with bytes as base64, results as arrays of numbers)
 * was more than the network round trip. Blobs travel as binary parameters and come back as
 * bytes.
 *
 * A root `put` with a hook is one statement when the hook can plan its writes ahead
 * (`postgresqlPlan`: the message projection's usual step), else the upsert and the hook between
 * BEGIN and COMMIT on one client of the pool.
 */
export class PostgresCheckpointSql implements CheckpointSql {
  constructor(private readonly pool: pg.Pool) {}

  async checkpointWithWrites(
    threadId: string,
    checkpointNs: string,
    checkpointId: string | undefined,
  ): Promise<{ rows: CheckpointRow[]; writes: WriteRow[] }> {
    const result =
      checkpointId !== undefined
        ? await this.pool.query<UnionRow<Buffer>>({
            ...CHECKPOINT_BY_ID,
            values: [threadId, checkpointNs, checkpointId],
          })
        : await this.pool.query<UnionRow<Buffer>>({
            ...LATEST_CHECKPOINT,
            values: [threadId, checkpointNs],
          });
    return splitUnion(result.rows, ownBytes);
  }

  async checkpointsWithWrites(
    query: CheckpointQuery,
  ): Promise<{ rows: CheckpointRow[]; writes: WriteRow[] }> {
    const conditions: string[] = [];
    // Names the combination of conditions present, which is all the text depends on.
    let shape = '';
    const values: unknown[] = [];
    const param = (value: unknown): string => {
      values.push(value);
      return `$${values.length}`;
    };
    if (query.threadId !== undefined) {
      conditions.push(`thread_id = ${param(query.threadId)}`);
      shape += 't';
    }
    if (query.checkpointNs !== undefined) {
      conditions.push(`checkpoint_ns = ${param(query.checkpointNs)}`);
      shape += 'n';
    }
    if (query.checkpointId !== undefined) {
      conditions.push(`checkpoint_id = ${param(query.checkpointId)}`);
      shape += 'i';
    }
    if (query.before !== undefined) {
      conditions.push(`checkpoint_id < ${param(query.before)}`);
      shape += 'b';
    }
    if (query.after !== undefined) {
      const { checkpointId, threadId, checkpointNs } = query.after;
      shape += 'a';
      conditions.push(
        `(checkpoint_id, thread_id, checkpoint_ns) < (${param(checkpointId)}, ${param(threadId)}, ${param(checkpointNs)})`,
      );
    }
    const text = `
      WITH cp AS (
        SELECT thread_id, checkpoint_ns, checkpoint_id, parent_checkpoint_id, type, checkpoint, metadata
        FROM checkpoints
        ${conditions.length > 0 ? `WHERE ${conditions.join(' AND ')}` : ''}
        ORDER BY checkpoint_id DESC, thread_id DESC, checkpoint_ns DESC
        LIMIT ${param(query.limit)}
      )
      SELECT 0 AS kind, thread_id, checkpoint_ns, checkpoint_id, parent_checkpoint_id AS ref, type,
        checkpoint AS data, metadata AS meta, NULL AS channel, 0 AS idx, NULL AS task_path
      FROM cp
      UNION ALL
      SELECT 1 AS kind, w.thread_id, w.checkpoint_ns, w.checkpoint_id, w.task_id AS ref, w.type,
        w.value AS data, NULL AS meta, w.channel, w.idx, w.task_path
      FROM checkpoint_writes w
      JOIN cp ON w.thread_id = cp.thread_id AND w.checkpoint_ns = cp.checkpoint_ns
        AND w.checkpoint_id = cp.checkpoint_id
      ORDER BY kind, checkpoint_id DESC, thread_id DESC, checkpoint_ns DESC`;
    const result = await this.pool.query<UnionRow<Buffer>>({
      name: `cognition_list_${shape}`,
      text,
      values,
    });
    return splitUnion(result.rows, ownBytes);
  }

  async channelWrites(
    threadId: string,
    checkpointNs: string,
    checkpointId: string,
    channel: string,
  ): Promise<WriteRow[]> {
    const result = await this.pool.query<RawWriteRow<Buffer>>({
      ...CHANNEL_WRITES,
      values: [threadId, checkpointNs, checkpointId, channel],
    });
    return result.rows.map((row) => toWriteRow(row, ownBytes));
  }

  async checkpointBlob(
    threadId: string,
    checkpointNs: string,
    checkpointId: string,
  ): Promise<Uint8Array | undefined> {
    const result = await this.pool.query<{ data: Buffer }>({
      ...CHECKPOINT_BLOB,
      values: [threadId, checkpointNs, checkpointId],
    });
    const row = result.rows[0];
    return row ? ownBytes(row.data) : undefined;
  }

  async checkpointBlobs(
    threadId: string,
    checkpointNs: string,
    checkpointIds: readonly string[],
  ): Promise<Map<string, Uint8Array>> {
    const result = await this.pool.query<{ checkpoint_id: string; data: Buffer }>({
      ...CHECKPOINT_BLOBS,
      values: [threadId, checkpointNs, checkpointIds],
    });
    return new Map(result.rows.map((row) => [row.checkpoint_id, ownBytes(row.data)]));
  }

  async putCheckpoint(
    row: CheckpointRow,
    hook: TransactionHook | undefined,
    holders: readonly string[],
    fence?: RunFence,
    writes: readonly WriteRow[] = [],
  ): Promise<boolean> {
    const values = [
      row.threadId,
      row.checkpointNs,
      row.checkpointId,
      row.parentCheckpointId,
      row.type,
      row.checkpoint,
      row.metadata,
    ];
    if (!hook && holders.length === 0) {
      if (writes.length > 0) {
        const carrying = await this.pool.query({
          ...UPSERT_CHECKPOINT_CARRYING,
          values: [...values, ...fenceValues(fence), ...writeColumns(writes)],
        });
        if (carrying.rowCount === 0 && fence) throw new RunFencedError([fence.runId]);
        return true;
      }
      if (!fence) {
        await this.pool.query({ ...UPSERT_CHECKPOINT, values });
        return true;
      }
      const fenced = await this.pool.query({
        ...UPSERT_CHECKPOINT_FENCED,
        values: [...values, ...fenceValues(fence)],
      });
      if (fenced.rowCount === 0) throw new RunFencedError([fence.runId]);
      return true;
    }
    // A plan made from what this process wrote last may be stale: then one more, from a read.
    for (let attempt = 1; attempt <= 2; attempt += 1) {
      const planned = await hook?.postgresqlPlan?.(this.pool);
      if (!planned) break;
      const result = await this.pool.query<{ done: number; version: string | null }>({
        name: `cognition_guarded_put_${planned.name}`,
        text: guardedPutSql(planned.ctes(GUARDED_FIRST_PARAM)),
        values: [
          ...values,
          holders,
          ...fenceValues(fence),
          ...writeColumns(writes),
          ...planned.values,
        ],
      });
      const written = result.rows[0];
      if (written?.done === 1) {
        if (written.version !== null) planned.applied?.(written.version);
        return true;
      }
      // Nothing was written: something moved since the plan's read (or a holder is gone).
      // The transaction below takes the locks first and decides again.
      if (planned.planned !== 'remembered') break;
    }
    return inPostgresTransaction(this.pool, async (client) => {
      await checkFence(client, fence);
      if (holders.length > 0) {
        const found = await client.query({
          ...LOCK_HOLDERS,
          values: [row.threadId, row.checkpointNs, holders],
        });
        if (found.rowCount !== holders.length) return false;
      }
      await client.query({ ...UPSERT_CHECKPOINT, values });
      if (writes.length > 0) {
        // The fence was checked above, its row share-locked until COMMIT.
        await client.query({
          ...INSERT_WRITES_KEEP,
          values: [...writeColumns(writes), ...fenceValues(undefined)],
        });
      }
      await hook?.postgresql(client);
      return true;
    });
  }

  async insertWrites(rows: WriteRow[], replace: boolean, fence?: RunFence): Promise<void> {
    const result = await this.pool.query({
      ...(replace ? INSERT_WRITES_REPLACE : INSERT_WRITES_KEEP),
      values: [...writeColumns(rows), ...fenceValues(fence)],
    });
    if (result.rowCount === 0 && fence) throw new RunFencedError([fence.runId]);
  }

  async deleteThread(threadId: string): Promise<void> {
    await this.pool.query({ ...DELETE_THREAD, values: [threadId] });
  }
}
