import type { RunFence } from '@cognition/storage';
import { RunFencedError } from '@cognition/storage';
import { inSqliteTransaction } from '../../db/raw-connections';
import type { SqliteConnection, SqliteSession } from '../../db/sqlite-connection';
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

const CHECKPOINT_UNION_COLUMNS = `thread_id, checkpoint_ns, checkpoint_id,
  parent_checkpoint_id AS ref, type, checkpoint AS data, metadata AS meta,
  NULL AS channel, 0 AS idx, NULL AS task_path`;
const WRITE_UNION_COLUMNS = `task_id AS ref, type, value AS data, NULL AS meta, channel, idx,
  task_path`;

function checkpointWithWritesSql(target: string): string {
  return `
    SELECT 0 AS kind, ${CHECKPOINT_UNION_COLUMNS}
    FROM checkpoints
    WHERE thread_id = @thread AND checkpoint_ns = @ns AND checkpoint_id = ${target}
    UNION ALL
    SELECT 1 AS kind, thread_id, checkpoint_ns, checkpoint_id, ${WRITE_UNION_COLUMNS}
    FROM checkpoint_writes
    WHERE thread_id = @thread AND checkpoint_ns = @ns AND checkpoint_id = ${target}`;
}

const CHECKPOINT_BY_ID = checkpointWithWritesSql('@id');
const LATEST_CHECKPOINT = checkpointWithWritesSql(`(SELECT max(checkpoint_id) FROM checkpoints
  WHERE thread_id = @thread AND checkpoint_ns = @ns)`);

const UPSERT_CHECKPOINT = `
  INSERT INTO checkpoints
    (thread_id, checkpoint_ns, checkpoint_id, parent_checkpoint_id, type, checkpoint, metadata)
  VALUES (@thread, @ns, @id, @parent, @type, @checkpoint, @metadata)
  ON CONFLICT (thread_id, checkpoint_ns, checkpoint_id) DO UPDATE SET
    parent_checkpoint_id = excluded.parent_checkpoint_id,
    type = excluded.type,
    checkpoint = excluded.checkpoint,
    metadata = excluded.metadata`;

function insertWriteSql(onConflict: string): string {
  return `
    INSERT INTO checkpoint_writes
      (thread_id, checkpoint_ns, checkpoint_id, task_id, idx, channel, type, value, task_path)
    VALUES (@thread, @ns, @id, @task, @idx, @channel, @type, @value, @path)
    ON CONFLICT (thread_id, checkpoint_ns, checkpoint_id, task_id, idx) ${onConflict}`;
}

const INSERT_WRITE_KEEP = insertWriteSql('DO NOTHING');
const INSERT_WRITE_REPLACE = insertWriteSql(`DO UPDATE SET channel = excluded.channel,
  type = excluded.type, value = excluded.value, task_path = excluded.task_path`);

const CHECKPOINT_WRITES = `
  SELECT thread_id, checkpoint_ns, checkpoint_id, task_id, idx, channel, type, value AS data,
    task_path
  FROM checkpoint_writes
  WHERE thread_id = @thread AND checkpoint_ns = @ns AND checkpoint_id = @id`;

const CHECKPOINT_BLOB = `SELECT checkpoint AS data FROM checkpoints
  WHERE thread_id = @thread AND checkpoint_ns = @ns AND checkpoint_id = @id`;

const CHECKPOINT_EXISTS = `SELECT 1 AS data FROM checkpoints
  WHERE thread_id = @thread AND checkpoint_ns = @ns AND checkpoint_id = @id`;

const CHANNEL_WRITES = `
  SELECT thread_id, checkpoint_ns, checkpoint_id, task_id, idx, channel, type, value AS data,
    task_path
  FROM checkpoint_writes
  WHERE thread_id = @thread AND checkpoint_ns = @ns AND checkpoint_id = @id
    AND channel = @channel`;

const DELETE_THREAD_WRITES = 'DELETE FROM checkpoint_writes WHERE thread_id = @thread';
const DELETE_THREAD_CHECKPOINTS = 'DELETE FROM checkpoints WHERE thread_id = @thread';

/**
 * The checkpointer's SQL on SQLite: prepared better-sqlite3 statements (prepared once per
 * connection) run synchronously on the Prisma client's own connection, under its lock, so they
 * never run inside another caller's interactive transaction. Blobs come back as bytes.
 *
 * A root `put` with a hook runs the upsert and the hook in one better-sqlite3 transaction under
 * the lock, so they commit or roll back together.
 */
export class SqliteCheckpointSql implements CheckpointSql {
  constructor(private readonly connection: SqliteConnection) {}

  checkpointWithWrites(
    threadId: string,
    checkpointNs: string,
    checkpointId: string | undefined,
  ): Promise<{ rows: CheckpointRow[]; writes: WriteRow[] }> {
    return this.connection.run((session) => {
      const union =
        checkpointId !== undefined
          ? session
              .prepare<UnionRow<Buffer>>(CHECKPOINT_BY_ID)
              .all({ thread: threadId, ns: checkpointNs, id: checkpointId })
          : session
              .prepare<UnionRow<Buffer>>(LATEST_CHECKPOINT)
              .all({ thread: threadId, ns: checkpointNs });
      return splitUnion(union, ownBytes);
    });
  }

  checkpointsWithWrites(
    query: CheckpointQuery,
  ): Promise<{ rows: CheckpointRow[]; writes: WriteRow[] }> {
    const conditions: string[] = [];
    const params: Record<string, string | number> = { limit: query.limit };
    if (query.threadId !== undefined) {
      conditions.push('thread_id = @thread');
      params['thread'] = query.threadId;
    }
    if (query.checkpointNs !== undefined) {
      conditions.push('checkpoint_ns = @ns');
      params['ns'] = query.checkpointNs;
    }
    if (query.checkpointId !== undefined) {
      conditions.push('checkpoint_id = @id');
      params['id'] = query.checkpointId;
    }
    if (query.before !== undefined) {
      conditions.push('checkpoint_id < @before');
      params['before'] = query.before;
    }
    if (query.after !== undefined) {
      conditions.push(
        '(checkpoint_id, thread_id, checkpoint_ns) < (@afterId, @afterThread, @afterNs)',
      );
      params['afterId'] = query.after.checkpointId;
      params['afterThread'] = query.after.threadId;
      params['afterNs'] = query.after.checkpointNs;
    }
    // The text depends only on which conditions are present, so the statement cache holds at
    // most one statement per combination. The page is read in index order (no sort of the
    // blobs), then each checkpoint's writes by primary key, in one read transaction so both see
    // the same snapshot.
    const page = `
      SELECT thread_id, checkpoint_ns, checkpoint_id, parent_checkpoint_id, type, checkpoint,
        metadata
      FROM checkpoints
      ${conditions.length > 0 ? `WHERE ${conditions.join(' AND ')}` : ''}
      ORDER BY checkpoint_id DESC, thread_id DESC, checkpoint_ns DESC
      LIMIT @limit`;
    return this.connection.run((session) =>
      session.database
        .transaction(() => {
          const rows = session.prepare<CheckpointColumns>(page).all(params).map(toCheckpointRow);
          const writesOf = session.prepare<RawWriteRow<Buffer>>(CHECKPOINT_WRITES);
          const writes = rows.flatMap((row) =>
            writesOf
              .all({ thread: row.threadId, ns: row.checkpointNs, id: row.checkpointId })
              .map((write) => toWriteRow(write, ownBytes)),
          );
          return { rows, writes };
        })
        .deferred(),
    );
  }

  channelWrites(
    threadId: string,
    checkpointNs: string,
    checkpointId: string,
    channel: string,
  ): Promise<WriteRow[]> {
    return this.connection.run((session) =>
      session
        .prepare<RawWriteRow<Buffer>>(CHANNEL_WRITES)
        .all({ thread: threadId, ns: checkpointNs, id: checkpointId, channel })
        .map((row) => toWriteRow(row, ownBytes)),
    );
  }

  checkpointBlob(
    threadId: string,
    checkpointNs: string,
    checkpointId: string,
  ): Promise<Uint8Array | undefined> {
    return this.connection.run((session) => {
      const row = session
        .prepare<{ data: Buffer }>(CHECKPOINT_BLOB)
        .get({ thread: threadId, ns: checkpointNs, id: checkpointId });
      return row ? ownBytes(row.data) : undefined;
    });
  }

  checkpointBlobs(
    threadId: string,
    checkpointNs: string,
    checkpointIds: readonly string[],
  ): Promise<Map<string, Uint8Array>> {
    return this.connection.run((session) => {
      const read = session.prepare<{ data: Buffer }>(CHECKPOINT_BLOB);
      const blobs = new Map<string, Uint8Array>();
      // One indexed lookup per id: prepared and synchronous, cheaper than an IN list whose
      // statement text would change with the number of ids.
      session.database
        .transaction(() => {
          for (const id of checkpointIds) {
            const row = read.get({ thread: threadId, ns: checkpointNs, id });
            if (row) blobs.set(id, ownBytes(row.data));
          }
        })
        .deferred();
      return blobs;
    });
  }

  async putCheckpoint(
    row: CheckpointRow,
    hook: TransactionHook | undefined,
    holders: readonly string[],
    fence?: RunFence,
    writes: readonly WriteRow[] = [],
  ): Promise<boolean> {
    const params = {
      thread: row.threadId,
      ns: row.checkpointNs,
      id: row.checkpointId,
      parent: row.parentCheckpointId,
      type: row.type,
      checkpoint: row.checkpoint,
      metadata: row.metadata,
    };
    const upsert = (session: SqliteSession): void => {
      session.prepare(UPSERT_CHECKPOINT).run(params);
    };
    if (!hook && holders.length === 0 && !fence && writes.length === 0) {
      await this.connection.run(upsert);
      return true;
    }
    // BEGIN IMMEDIATE: the write lock is held from the check to the commit.
    return inSqliteTransaction(this.connection, (session) => {
      checkFence(session, fence);
      const exists = session.prepare<{ data: number }>(CHECKPOINT_EXISTS);
      for (const id of holders) {
        if (!exists.get({ thread: row.threadId, ns: row.checkpointNs, id })) return false;
      }
      upsert(session);
      insertWriteRows(session, writes, false);
      hook?.sqlite(session);
      return true;
    });
  }

  insertWrites(rows: WriteRow[], replace: boolean, fence?: RunFence): Promise<void> {
    return this.connection.run((session) => {
      session.database
        .transaction(() => {
          checkFence(session, fence);
          insertWriteRows(session, rows, replace);
        })
        .immediate();
    });
  }

  deleteThread(threadId: string): Promise<void> {
    return this.connection.run((session) => {
      session.database
        .transaction(() => {
          session.prepare(DELETE_THREAD_WRITES).run({ thread: threadId });
          session.prepare(DELETE_THREAD_CHECKPOINTS).run({ thread: threadId });
        })
        .immediate();
    });
  }
}

interface CheckpointColumns {
  thread_id: string;
  checkpoint_ns: string;
  checkpoint_id: string;
  parent_checkpoint_id: string | null;
  type: string | null;
  checkpoint: Buffer;
  metadata: Buffer;
}

function toCheckpointRow(row: CheckpointColumns): CheckpointRow {
  return {
    threadId: row.thread_id,
    checkpointNs: row.checkpoint_ns,
    checkpointId: row.checkpoint_id,
    parentCheckpointId: row.parent_checkpoint_id,
    type: row.type,
    checkpoint: ownBytes(row.checkpoint),
    metadata: ownBytes(row.metadata),
  };
}

function insertWriteRows(
  session: SqliteSession,
  rows: readonly WriteRow[],
  replace: boolean,
): void {
  if (rows.length === 0) return;
  const insert = session.prepare(replace ? INSERT_WRITE_REPLACE : INSERT_WRITE_KEEP);
  for (const row of rows) {
    insert.run({
      thread: row.threadId,
      ns: row.checkpointNs,
      id: row.checkpointId,
      task: row.taskId,
      idx: row.idx,
      channel: row.channel,
      type: row.type,
      value: row.value,
      path: row.taskPath,
    });
  }
}

/** Run fencing, inside the write's transaction (SQLite serialises them: no claim in between). */
function checkFence(session: SqliteSession, fence: RunFence | undefined): void {
  if (!fence) return;
  const held = session
    .prepare<{ held: number }>(
      'SELECT 1 AS held FROM runs WHERE id = ? AND owner_node = ? AND lease_attempt = ?',
    )
    .get(fence.runId, fence.ownerNode, fence.claim);
  if (!held) throw new RunFencedError([fence.runId]);
}
