import { AIMessage, HumanMessage } from '@langchain/core/messages';
import type { BaseMessage } from '@langchain/core/messages';
import { parseRetention, pruneThread } from '@cognition/storage';
import { putMessagesCheckpoint } from '@cognition/storage/testing';
import Sqlite from 'better-sqlite3';
import pg from 'pg';
import type { DatabaseProvider } from '../db/migrate';
import { createPrismaStorage } from '../prisma-storage';
import { createTestDatabase } from './test-db';
import type { TestDatabase } from './test-db';

// Support for the retention size specs (not exported from the index).

/** How long `awaitEarlierTransactions` waits before it names what still runs. */
const EARLIER_TRANSACTIONS_WAIT_MS = 60_000;

/**
 * Waits until every transaction running anywhere on the server when it was called has ended.
 * VACUUM FULL keeps a deleted row ("recently dead") while a transaction older than the delete
 * runs, in any database of the cluster: the vacuum's own snapshot counts every database's
 * running transactions. So another spec's open transaction (a CREATE DATABASE, a migration)
 * kept the rows of the last prune batches and the figure moved (once 311,296 bytes after pruning
 * instead of 57,344; a transaction held open in another database keeps every pruned row).
 * Once those have ended, the tables hold exactly the live rows after VACUUM FULL.
 */
async function awaitEarlierTransactions(client: pg.Client, onBlocked?: () => void): Promise<void> {
  const { rows } = await client.query<{ xid: string }>('SELECT pg_current_xact_id()::text AS xid');
  const mark = rows[0]?.xid ?? '0';
  const deadline = Date.now() + EARLIER_TRANSACTIONS_WAIT_MS;
  for (;;) {
    const { rows: state } = await client.query<{ done: boolean }>(
      'SELECT pg_snapshot_xmin(pg_current_snapshot()) > $1::xid8 AS done',
      [mark],
    );
    if (state[0]?.done) return;
    onBlocked?.();
    if (Date.now() > deadline) {
      const { rows: running } = await client.query(
        `SELECT pid, datname, backend_xid::text, state, xact_start, left(query, 200) AS query
           FROM pg_stat_activity WHERE backend_xid IS NOT NULL`,
      );
      throw new Error(
        `transactions begun before xid ${mark} still run after ${EARLIER_TRANSACTIONS_WAIT_MS} ms, so VACUUM FULL would keep rows deleted since: ${JSON.stringify(running)}`,
      );
    }
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

/** The database's size on disk as the engine reports it after compaction (VACUUM). */
async function databaseBytes(database: TestDatabase): Promise<number> {
  if (database.provider === 'sqlite') {
    const db = new Sqlite(database.path);
    try {
      db.pragma('wal_checkpoint(TRUNCATE)');
      db.exec('VACUUM');
      const pages = db.pragma('page_count', { simple: true }) as number;
      const size = db.pragma('page_size', { simple: true }) as number;
      return pages * size;
    } finally {
      db.close();
    }
  }
  return compactedBytes(database.url, ['checkpoints', 'checkpoint_writes']);
}

/**
 * The size of `tables` (with their TOAST and indexes) after VACUUM FULL, once no transaction
 * older than this call runs on the server (see `awaitEarlierTransactions`; `onBlocked` is told
 * each time it finds one still running).
 */
export async function compactedBytes(
  url: string,
  tables: readonly string[],
  options: { onBlocked?: () => void } = {},
): Promise<number> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    await awaitEarlierTransactions(client, options.onBlocked);
    await client.query(`VACUUM FULL ${tables.join(', ')}`);
    const { rows } = await client.query<{ bytes: string }>(
      `SELECT sum(pg_total_relation_size(t))::text AS bytes FROM unnest($1::regclass[]) AS t`,
      [tables],
    );
    return Number(rows[0]?.bytes ?? 0);
  } finally {
    await client.end();
  }
}

/**
 * Writes a 1,000-step thread (a message every 50 steps), measures the database, prunes to
 * keep_last:10, measures again. Returns the figures.
 */
export async function measurePruning(provider: DatabaseProvider): Promise<{
  before: number;
  after: number;
  deleted: number;
  rows: number;
}> {
  const database = await createTestDatabase(provider);
  const backend =
    database.provider === 'sqlite'
      ? createPrismaStorage({ provider: 'sqlite', path: database.path })
      : createPrismaStorage({ provider: 'postgresql', url: database.url, poolSize: 2 });
  try {
    await backend.initialize();
    const session = await backend.sessions.create({}, {});
    const messages: BaseMessage[] = [];
    for (let step = 1; step <= 1000; step += 1) {
      if (step % 50 === 1) {
        messages.push(
          step % 100 === 1
            ? new HumanMessage({ id: `h${step}`, content: `question ${step} `.repeat(20) })
            : new AIMessage({ id: `a${step}`, content: `answer ${step} `.repeat(40) }),
        );
      }
      await putMessagesCheckpoint(backend, session.threadId, [...messages], { step });
    }
    const before = await databaseBytes(database);
    let deleted = 0;
    for (;;) {
      const step = await pruneThread(
        backend.checkpoints,
        session.threadId,
        parseRetention('keep_last:10') ?? { kind: 'all' },
        { batch: 250 },
      );
      deleted += step;
      if (step < 250) break;
    }
    const rows = (await backend.messages.listAll(session.id, {})).length;
    // Measured with the backend's connections closed: no snapshot of theirs keeps dead rows.
    await backend.close();
    const after = await databaseBytes(database);
    return { before, after, deleted, rows };
  } finally {
    await backend.close();
    await database.cleanup();
  }
}
