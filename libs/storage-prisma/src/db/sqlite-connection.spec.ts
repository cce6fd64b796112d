import type { OpenedDatabase, PrismaDb } from './db';
import { createSqliteHandle, openSqlite } from './db';
import { rawConnectionOf } from './raw-connections';
import type { SqliteConnection } from './sqlite-connection';
import type { TestDatabase } from '../testing/test-db';
import { createTestDatabase } from '../testing/test-db';

/**
 * The connection discipline of `SqliteConnection`: one connection, one lock taken by interactive
 * transactions (BEGIN to COMMIT/ROLLBACK), by every query outside them, and by raw statements.
 */

let database: TestDatabase;
let opened: OpenedDatabase;
let db: PrismaDb;
let connection: SqliteConnection;

beforeEach(async () => {
  database = await createTestDatabase('sqlite');
  if (database.provider !== 'sqlite') throw new Error('sqlite only');
  // A short maxWait: a lock leaked by a failed transaction shows up as a quick failure.
  opened = await openSqlite(database.path, { transactionMaxWaitMs: 2_000 });
  db = opened.db;
  const raw = rawConnectionOf(db);
  if (raw?.provider !== 'sqlite') throw new Error('openSqlite did not register its connection');
  connection = raw.connection;
});

afterEach(async () => {
  await opened.close();
  await database.cleanup();
});

const ROLLBACK = new Error('roll back');

function insertItem(client: Pick<PrismaDb, '$executeRaw'>, key: string): Promise<number> {
  return client.$executeRaw`INSERT INTO store_items (namespace, key, value) VALUES ('t', ${key}, '{}')`;
}

async function keys(): Promise<string[]> {
  const rows = await db.storeItem.findMany({ orderBy: { key: 'asc' }, select: { key: true } });
  return rows.map((row) => row.key);
}

/**
 * Runs an interactive transaction that writes `inside`, starts `during` while it is open, waits
 * until `during` settles or a bound passes (on the official adapter alone it settles at once,
 * inside the transaction), then rolls back. Returns `during`'s outcome.
 */
async function duringRolledBackTransaction<T>(during: () => Promise<T>): Promise<T> {
  let started: Promise<T> | undefined;
  await expect(
    db.$transaction(async (tx) => {
      await insertItem(tx, 'inside');
      started = during();
      await Promise.race([
        started.catch(() => undefined),
        new Promise((resolve) => setTimeout(resolve, 200)),
      ]);
      throw ROLLBACK;
    }),
  ).rejects.toBe(ROLLBACK);
  if (!started) throw new Error('the transaction callback did not run');
  return started;
}

describe('SqliteConnection', () => {
  it('a write outside a transaction, issued while another one is open and then rolled back, survives', async () => {
    await duringRolledBackTransaction(() => insertItem(db, 'outside'));
    expect(await keys()).toEqual(['outside']);
  });

  it('a read outside a transaction does not see its uncommitted rows', async () => {
    const seen = await duringRolledBackTransaction(() => keys());
    expect(seen).toEqual([]);
  });

  it('a raw statement waits for an open transaction and survives its rollback', async () => {
    await duringRolledBackTransaction(() =>
      connection.run((session) => {
        session
          .prepare("INSERT INTO store_items (namespace, key, value) VALUES ('t', @key, '{}')")
          .run({ key: 'raw' });
      }),
    );
    expect(await keys()).toEqual(['raw']);
  });

  it('a failed COMMIT rolls the transaction back and releases the connection', async () => {
    const commit = db.$transaction(async (tx) => {
      // Deferred foreign keys are checked at COMMIT, which then fails and (in SQLite) leaves
      // the transaction open.
      await tx.$executeRawUnsafe('PRAGMA defer_foreign_keys = ON');
      await tx.$executeRaw`INSERT INTO session_scopes (session_id, key, value) VALUES ('missing', 'k', 'v')`;
      await insertItem(tx, 'doomed');
    });
    await expect(commit).rejects.toThrow(/ForeignKeyConstraintViolation/);
    expect(await connection.run((session) => session.database.inTransaction)).toBe(false);
    expect(await keys()).toEqual([]);
    // Another transaction can start (the official adapter's own mutex was released too).
    await db.$transaction(async (tx) => {
      await insertItem(tx, 'after');
    });
    expect(await keys()).toEqual(['after']);
  });

  it('every connection gets the per-connection settings, and the raw path shares it with Prisma', async () => {
    if (database.provider !== 'sqlite') throw new Error('sqlite only');
    const handle = createSqliteHandle(database.path);
    try {
      const raw = rawConnectionOf(handle.db);
      if (raw?.provider !== 'sqlite') throw new Error('createSqliteHandle did not register it');
      const lazy = raw.connection;
      // Not connected through handle.connect(): the raw path opens the connection itself.
      const settings = await lazy.run((session) => {
        session.database.exec('CREATE TEMP TABLE probe (x)');
        return {
          foreignKeys: session.database.pragma('foreign_keys', { simple: true }),
          synchronous: session.database.pragma('synchronous', { simple: true }),
        };
      });
      expect(settings).toEqual({ foreignKeys: 1n, synchronous: 1n });
      // A TEMP table exists only on the connection that created it.
      await expect(
        handle.db.$queryRawUnsafe('SELECT count(*) AS n FROM temp.probe'),
      ).resolves.toEqual([{ n: 0n }]);
    } finally {
      await handle.close();
    }
  });
});
