import pg from 'pg';
import { compactedBytes } from '../testing/checkpoint-retention-size-cases';
import { createTestDatabase } from '../testing/test-db';
import type { TestDatabase } from '../testing/test-db';

function urlOf(database: TestDatabase): string {
  if (database.provider !== 'postgresql') throw new Error('a PostgreSQL database was asked for');
  return database.url;
}

/*
 * checkpoint-retention-size.int.spec.ts once measured 311,296 bytes after pruning instead of
 * 57,344 while other specs ran beside it. VACUUM FULL keeps rows deleted after the oldest
 * transaction still running anywhere on the server (its own snapshot counts every database's
 * running transactions), so another spec's transaction decided the figure. The measurement now
 * waits for such transactions to end; here one is held open, in another database, across the
 * delete, and committed only once the measurement has found it.
 */
it('the compacted size of a table ignores a transaction another database held open across the delete', async () => {
  const database = await createTestDatabase('postgresql');
  const other = await createTestDatabase('postgresql');
  const url = urlOf(database);
  const client = new pg.Client({ connectionString: url });
  const holder = new pg.Client({ connectionString: urlOf(other) });
  try {
    await client.connect();
    await holder.connect();
    for (const table of ['filled', 'blank']) {
      await client.query(`CREATE TABLE ${table} (id integer PRIMARY KEY, body text)`);
    }
    await client.query(
      `INSERT INTO filled SELECT i, repeat(md5(i::text), 20) FROM generate_series(1, 2000) AS i`,
    );
    // A transaction with an id, older than the delete, in another database.
    await holder.query('BEGIN');
    await holder.query('SELECT pg_current_xact_id()');
    await client.query('DELETE FROM filled');

    const commits: Array<Promise<unknown>> = [];
    const after = await compactedBytes(url, ['filled'], {
      onBlocked: () => {
        if (commits.length === 0) commits.push(holder.query('COMMIT'));
      },
    });
    await Promise.all(commits);

    expect(after).toBe(await compactedBytes(url, ['blank']));
    expect(commits).toHaveLength(1);
  } finally {
    await holder.end().catch(() => undefined);
    await client.end().catch(() => undefined);
    await other.cleanup();
    await database.cleanup();
  }
}, 120_000);
