import { PrismaBetterSQLite3 } from '@prisma/adapter-better-sqlite3';
import type {
  IsolationLevel,
  SqlDriverAdapter,
  SqlMigrationAwareDriverAdapterFactory,
  SqlQuery,
  SqlResultSet,
  Transaction,
} from '@prisma/driver-adapter-utils';
import Database from 'better-sqlite3';
import type { Statement } from 'better-sqlite3';

/**
 * The one SQLite connection of a Prisma client, and the one lock every user of that connection
 * takes.
 *
 * `@prisma/adapter-better-sqlite3` serializes interactive transactions with a private mutex but
 * runs every other query at once on the same connection. SQLite has one transaction per
 * connection, so a plain write issued by another caller while a transaction is open becomes part
 * of that transaction and is rolled back with it, and a plain read sees its uncommitted rows.
 * This factory wraps the official adapter so that:
 *
 * - an interactive transaction holds the lock from `BEGIN` to `COMMIT`/`ROLLBACK`;
 * - every query outside a transaction waits for the lock (FIFO);
 * - raw statements on the better-sqlite3 `Database` ({@link SqliteConnection.run}) take the same
 *   lock, so code that needs speed can skip Prisma's query engine without breaking isolation.
 *
 * It also applies the per-connection settings to every connection it opens (including the lazy
 * one Prisma opens on a first query, and a reconnect after `$disconnect`).
 */
export class SqliteConnection implements SqlMigrationAwareDriverAdapterFactory {
  readonly provider = 'sqlite';
  readonly adapterName: string;
  private readonly official: PrismaBetterSQLite3;
  private opening: Promise<LockedAdapter> | undefined;
  private adapter: LockedAdapter | undefined;

  constructor(file: string, options: { busyTimeoutMs: number }) {
    this.official = new PrismaBetterSQLite3({ url: file, timeout: options.busyTimeoutMs });
    this.adapterName = this.official.adapterName;
  }

  /**
   * Prisma's entry point. Returns the open connection when there is one (the raw path may have
   * opened it first), so a client never has two connections to the file.
   */
  connect(): Promise<SqlDriverAdapter> {
    return this.open();
  }

  connectToShadowDb(): Promise<SqlDriverAdapter> {
    return this.official.connectToShadowDb();
  }

  /**
   * Runs `fn` on the connection once no transaction is open and no earlier caller is waiting,
   * never interleaved with anything else on the connection. `fn` must be synchronous
   * (better-sqlite3 is), so the lock is held only while it runs. Opens the connection if
   * Prisma has not yet.
   */
  async run<T>(fn: (session: SqliteSession) => T): Promise<T> {
    let adapter = this.adapter;
    if (!adapter || adapter.disposed) adapter = await this.open();
    // When the lock is free, `fn` runs synchronously within this call (no await before it).
    if (!adapter.lock.tryLock()) await adapter.lock.lock();
    try {
      return fn(adapter.session);
    } finally {
      adapter.lock.unlock();
    }
  }

  private open(): Promise<LockedAdapter> {
    this.opening ??= this.official.connect().then(
      (inner) => {
        const adapter = new LockedAdapter(inner, () => {
          if (this.adapter === adapter) {
            this.adapter = undefined;
            this.opening = undefined;
          }
        });
        this.adapter = adapter;
        return adapter;
      },
      (error: unknown) => {
        this.opening = undefined;
        throw error;
      },
    );
    return this.opening;
  }
}

/** A connection's `Database` and its prepared-statement cache. */
export interface SqliteSession {
  readonly database: Database.Database;
  /**
   * The prepared statement for `sql`, prepared once per connection. Integers come back as
   * numbers (the adapter switches the connection's default to BigInt).
   */
  prepare<Row = unknown>(sql: string): Statement<unknown[], Row>;
}

/**
 * FIFO mutex. `unlock` hands the lock straight to the next waiter (it stays locked in between),
 * so a caller arriving meanwhile cannot overtake the queue through `tryLock`.
 */
class Lock {
  private locked = false;
  private readonly waiters: (() => void)[] = [];

  tryLock(): boolean {
    if (this.locked) return false;
    this.locked = true;
    return true;
  }

  lock(): Promise<void> {
    if (this.tryLock()) return Promise.resolve();
    return new Promise((resolve) => this.waiters.push(resolve));
  }

  unlock(): void {
    const next = this.waiters.shift();
    if (next) next();
    else this.locked = false;
  }
}

/** The official adapter with every query, script and transaction under {@link Lock}. */
class LockedAdapter implements SqlDriverAdapter {
  readonly provider = 'sqlite';
  readonly adapterName: string;
  readonly lock = new Lock();
  readonly session: SqliteSession;
  disposed = false;

  constructor(
    private readonly inner: SqlDriverAdapter,
    private readonly onDispose: () => void,
  ) {
    this.adapterName = inner.adapterName;
    const database = databaseOf(inner);
    // Per-connection settings (journal_mode = WAL is persistent and set by the migrator): the
    // cascades rely on foreign keys; NORMAL syncs the WAL at checkpoints, not at every commit.
    database.pragma('foreign_keys = ON');
    database.pragma('synchronous = NORMAL');
    const statements = new Map<string, Statement<unknown[], unknown>>();
    this.session = {
      database,
      prepare: <Row>(sql: string) => {
        let statement = statements.get(sql);
        if (!statement) {
          statement = database.prepare(sql).safeIntegers(false);
          statements.set(sql, statement);
        }
        return statement as Statement<unknown[], Row>;
      },
    };
  }

  queryRaw(query: SqlQuery): Promise<SqlResultSet> {
    return this.locked(() => this.inner.queryRaw(query));
  }

  executeRaw(query: SqlQuery): Promise<number> {
    return this.locked(() => this.inner.executeRaw(query));
  }

  executeScript(script: string): Promise<void> {
    return this.locked(() => this.inner.executeScript(script));
  }

  async startTransaction(isolationLevel?: IsolationLevel): Promise<Transaction> {
    await this.lock.lock();
    try {
      const inner = await this.inner.startTransaction(isolationLevel);
      return new LockedTransaction(inner, this.session.database, () => this.lock.unlock());
    } catch (error) {
      this.lock.unlock();
      throw error;
    }
  }

  async dispose(): Promise<void> {
    this.disposed = true;
    this.onDispose();
    await this.inner.dispose();
  }

  private async locked<T>(fn: () => Promise<T>): Promise<T> {
    await this.lock.lock();
    try {
      return await fn();
    } finally {
      this.lock.unlock();
    }
  }
}

/**
 * An interactive transaction: its queries run without the lock (it holds it); commit and
 * rollback release it exactly once.
 */
class LockedTransaction implements Transaction {
  readonly provider = 'sqlite';
  readonly adapterName: string;
  readonly options: Transaction['options'];
  private released = false;

  constructor(
    private readonly inner: Transaction,
    private readonly database: Database.Database,
    private readonly unlock: () => void,
  ) {
    this.adapterName = inner.adapterName;
    this.options = inner.options;
  }

  queryRaw(query: SqlQuery): Promise<SqlResultSet> {
    return this.inner.queryRaw(query);
  }

  /**
   * Prisma ends a transaction by running `COMMIT` or `ROLLBACK` here and then calling
   * `commit()`/`rollback()`, which it skips when the statement fails. SQLite keeps the
   * transaction open after a failed `COMMIT` (a deferred foreign key, SQLITE_BUSY), so without
   * this the connection would stay inside it, and every later caller would wait forever.
   */
  async executeRaw(query: SqlQuery): Promise<number> {
    try {
      return await this.inner.executeRaw(query);
    } catch (error) {
      if (query.sql === 'COMMIT' || query.sql === 'ROLLBACK') {
        // The statement's error is the one to report; a failing ROLLBACK here cannot be
        // helped and would only hide it.
        await this.abandon().catch(() => undefined);
      }
      throw error;
    }
  }

  async commit(): Promise<void> {
    try {
      await this.inner.commit();
    } finally {
      this.release();
    }
  }

  async rollback(): Promise<void> {
    try {
      await this.inner.rollback();
    } finally {
      this.release();
    }
  }

  private async abandon(): Promise<void> {
    try {
      if (this.database.inTransaction) this.database.exec('ROLLBACK');
    } finally {
      try {
        // Releases the official adapter's own transaction mutex.
        await this.inner.rollback();
      } finally {
        this.release();
      }
    }
  }

  private release(): void {
    if (this.released) return;
    this.released = true;
    this.unlock();
  }
}

/**
 * The better-sqlite3 `Database` inside the official adapter. It keeps it in its `client` field,
 * which its typings do not declare; checked, so an adapter upgrade that moves it fails loudly.
 */
function databaseOf(adapter: SqlDriverAdapter): Database.Database {
  const client = (adapter as unknown as { client?: unknown }).client;
  if (!(client instanceof Database)) {
    throw new Error(
      '@prisma/adapter-better-sqlite3 no longer exposes its better-sqlite3 Database as `client`',
    );
  }
  return client;
}
