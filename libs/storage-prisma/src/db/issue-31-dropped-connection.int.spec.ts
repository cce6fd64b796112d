import pg from 'pg';
import { createPostgresHandle } from './db';
import { toStorageError } from './errors';
import { inPostgresTransaction, rawConnectionOf } from './raw-connections';
import { createTestDatabase } from '../testing/test-db';
import type { TestDatabase } from '../testing/test-db';

/**
 * Issue 31: a node of the cluster died in the middle of a PostgreSQL outage (its clients saw
 * `ECONNRESET`, its streams were cut) because node-postgres emitted 'error' on a connection
 * held by a transaction — the checkpointer's `inPostgresTransaction` — when the server went
 * away, and nothing listened: an unhandled 'error' event ends the process. Here the server
 * ends that connection (`pg_terminate_backend`, what a stop looks like to the client) while the
 * transaction holds it; before the fix the emitted 'error' was an uncaught exception, which
 * fails this test.
 */
describe('a PostgreSQL connection dropped while a transaction holds it (issue 31)', () => {
  let database: TestDatabase;
  let handle: ReturnType<typeof createPostgresHandle>;
  let pool: pg.Pool;

  beforeAll(async () => {
    database = await createTestDatabase('postgresql');
    if (database.provider !== 'postgresql') throw new Error('postgres expected');
    handle = createPostgresHandle(database.url, { poolSize: 2 });
    await handle.migrate();
    await handle.connect();
    const raw = rawConnectionOf(handle.db);
    if (raw?.provider !== 'postgresql') throw new Error('pool expected');
    pool = raw.pool;
  });
  afterAll(async () => {
    await handle?.close();
    await database?.cleanup();
  });

  async function terminate(pid: number): Promise<void> {
    if (database.provider !== 'postgresql') throw new Error('postgres expected');
    const admin = new pg.Client({ connectionString: database.url });
    await admin.connect();
    try {
      await admin.query('SELECT pg_terminate_backend($1)', [pid]);
    } finally {
      await admin.end();
    }
  }

  it('fails the transaction UNAVAILABLE instead of crashing the process, and the pool serves on', async () => {
    const failure = await inPostgresTransaction(pool, async (client) => {
      const { rows } = await client.query<{ pid: number }>('SELECT pg_backend_pid() AS pid');
      const ended = new Promise((resolve) => client.once('end', resolve));
      await terminate(Number(rows[0]?.pid));
      // The socket is closed and pg has emitted 'error' on the client by now.
      await ended;
      await client.query('SELECT 1');
    }).then(
      () => new Error('the transaction was expected to fail'),
      (error: unknown) => error,
    );
    expect(toStorageError(failure, 'put checkpoint')).toMatchObject({
      name: 'StorageError',
      code: 'UNAVAILABLE',
    });
    // The broken connection was thrown away, not handed to the next caller.
    const { rows } = await pool.query<{ one: number }>('SELECT 1 AS one');
    expect(rows[0]?.one).toBe(1);
  });

  it('survives the connection dropping under a query in flight', async () => {
    const failure = await inPostgresTransaction(pool, async (client) => {
      const { rows } = await client.query<{ pid: number }>('SELECT pg_backend_pid() AS pid');
      const pid = Number(rows[0]?.pid);
      const sleeping = client.query('SELECT pg_sleep(30)');
      await terminate(pid);
      await sleeping;
    }).then(
      () => new Error('the transaction was expected to fail'),
      (error: unknown) => error,
    );
    expect(toStorageError(failure, 'put checkpoint').code).toBe('UNAVAILABLE');
    const { rows } = await pool.query<{ one: number }>('SELECT 1 AS one');
    expect(rows[0]?.one).toBe(1);
  });
});
