import type { DatabaseHandle, OpenedDatabase, OpenOptions } from './handle';
import type * as PostgresHandle from './postgres-handle';
import type * as SqliteHandle from './sqlite-handle';

export type {
  DatabaseHandle,
  OpenedDatabase,
  OpenOptions,
  PoolStats,
  PrismaDb,
  PrismaTx,
} from './handle';
export type { DatabaseProvider } from './migrate';

/*
 * Each provider's driver, driver adapter and generated client are loaded only when a database of
 * that provider is made: a SQLite server never loads `pg` (whose load also compiles Node's
 * bundled HTTP client for its runtime check), `@prisma/adapter-pg` or the PostgreSQL client, and
 * a PostgreSQL one never loads the SQLite client. The handles are built synchronously (a storage
 * backend holds one from construction), hence `require` rather than `import()`; the server
 * bundle keeps these modules behind lazy initialisers, so the load really is deferred.
 */
function sqliteHandles(): typeof SqliteHandle {
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  return require('./sqlite-handle') as typeof SqliteHandle;
}

function postgresHandles(): typeof PostgresHandle {
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  return require('./postgres-handle') as typeof PostgresHandle;
}

/**
 * A SQLite database file (created with its parent directories on migrate): one connection in WAL
 * mode with foreign keys on and a busy timeout, so other processes on the same file wait for
 * the write lock rather than fail (see `sqlite-handle.ts`).
 */
export function createSqliteHandle(path: string, options: OpenOptions = {}): DatabaseHandle {
  return sqliteHandles().createSqliteHandle(path, options);
}

/**
 * A Postgres database behind a pool of `poolSize` connections (default 10); `migrate()` runs
 * under an advisory lock, so several processes starting at once against one database are safe
 * (see `postgres-handle.ts`).
 */
export function createPostgresHandle(
  url: string,
  options: OpenOptions & { poolSize?: number } = {},
): DatabaseHandle {
  return postgresHandles().createPostgresHandle(url, options);
}

async function open(handle: DatabaseHandle): Promise<OpenedDatabase> {
  try {
    const migrations = await handle.migrate();
    await handle.connect();
    const { db, provider, close, poolStats } = handle;
    return poolStats
      ? { db, provider, migrations, close, poolStats }
      : { db, provider, migrations, close };
  } catch (error) {
    await handle.close().catch(() => undefined);
    throw error;
  }
}

/**
 * Opens a SQLite database file (see {@link createSqliteHandle}) and applies pending migrations.
 * Throws StorageError UNAVAILABLE when the file cannot be opened, STORAGE_ERROR when a
 * migration is refused or fails.
 */
export function openSqlite(path: string, options: OpenOptions = {}): Promise<OpenedDatabase> {
  return open(createSqliteHandle(path, options));
}

/** Opens a Postgres database (see {@link createPostgresHandle}) and applies pending migrations. */
export function openPostgres(
  url: string,
  options: OpenOptions & { poolSize?: number } = {},
): Promise<OpenedDatabase> {
  return open(createPostgresHandle(url, options));
}
