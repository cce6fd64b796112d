import { AIMessage, HumanMessage } from '@langchain/core/messages';
import type { BaseMessage } from '@langchain/core/messages';
import { parseRetention, pruneThread } from '@cognition/storage';
import { putMessagesCheckpoint } from '@cognition/storage/testing';
import Sqlite from 'better-sqlite3';
import pg from 'pg';
import type { DatabaseProvider } from './migrate';
import { createPrismaStorage } from './prisma-storage';
import { createTestDatabase } from './testing-db';
import type { TestDatabase } from './testing-db';

// Support for the retention size specs (not exported from the index).

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
  const client = new pg.Client({ connectionString: database.url });
  await client.connect();
  try {
    await client.query('VACUUM FULL checkpoints, checkpoint_writes');
    const { rows } = await client.query<{ bytes: string }>(
      `SELECT (pg_total_relation_size('checkpoints') + pg_total_relation_size('checkpoint_writes'))::text AS bytes`,
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
