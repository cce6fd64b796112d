import { mkdirSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import { StorageError } from '@cognition/storage';
import { PrismaPg } from '@prisma/adapter-pg';
import pg from 'pg';
import { PrismaClient as PostgresClient } from '../generated/postgres/client';
import type { Prisma } from '../generated/postgres/client';
import { PrismaClient as SqliteClient } from '../generated/sqlite/client';
import type { DatabaseProvider, MigrateOptions, MigrateResult } from './migrate';
import { migratePostgresPool, migrateSqliteFile, redactUrl } from './migrate';
import { guardPoolErrors } from './pool-errors';
import { registerRawConnection } from './raw-connections';
import { SqliteConnection } from './sqlite-connection';

/**
 * The one client type both providers satisfy. Both generated clients come from the same model
 * source, so their model APIs are identical; the SQLite client is typed as the Postgres one.
 * Provider-specific behaviour (raw SQL dialects, `mode: 'insensitive'`, ...) must not be used
 * through this type.
 */
export type PrismaDb = PostgresClient;

/** The client of an interactive transaction (`db.$transaction(async (tx) => ...)`). */
export type PrismaTx = Prisma.TransactionClient;

export type { DatabaseProvider } from './migrate';

export interface PoolStats {
  /** Open connections. */
  size: number;
  idle: number;
  /** Queries waiting for a connection. */
  waiting: number;
}

/** An open, migrated database. `close()` is idempotent. */
export interface OpenedDatabase {
  db: PrismaDb;
  provider: DatabaseProvider;
  /** What the migrator did while opening. */
  migrations: MigrateResult;
  close: () => Promise<void>;
  /** Postgres only: the connection pool's current figures. */
  poolStats?: () => PoolStats;
}

export interface OpenOptions extends MigrateOptions {
  /** Interactive transactions wait at most this long for a connection (ms). Default 10 000. */
  transactionMaxWaitMs?: number;
  /** Interactive transactions are rolled back after this long (ms). Default 30 000. */
  transactionTimeoutMs?: number;
}

/** How long a SQLite connection waits for another process's write lock before SQLITE_BUSY. */
const SQLITE_BUSY_TIMEOUT_MS = 10_000;
const DEFAULT_POSTGRES_POOL_SIZE = 10;

function transactionOptions(options: OpenOptions): { maxWait: number; timeout: number } {
  return {
    maxWait: options.transactionMaxWaitMs ?? 10_000,
    timeout: options.transactionTimeoutMs ?? 30_000,
  };
}

function once(fn: () => Promise<void>): () => Promise<void> {
  let closing: Promise<void> | undefined;
  return () => (closing ??= fn());
}

/**
 * A database whose client exists but which may not be migrated or connected yet: what a storage
 * backend holds from construction, so its checkpointer and store can be built synchronously.
 * `migrate()` and `connect()` are idempotent in effect and safe to call again.
 */
export interface DatabaseHandle {
  db: PrismaDb;
  provider: DatabaseProvider;
  /** Applies the pending committed migrations (see `migrate.ts`). */
  migrate: () => Promise<MigrateResult>;
  /** Connects and applies per-connection settings. */
  connect: () => Promise<void>;
  close: () => Promise<void>;
  poolStats?: () => PoolStats;
}

/**
 * A SQLite database file (created with its parent directories on migrate): one connection in WAL
 * mode with foreign keys on and a busy timeout, so other processes on the same file wait for
 * the write lock rather than fail. Everything on the connection (Prisma queries, interactive
 * transactions, the checkpointer's raw statements) takes one lock: see {@link SqliteConnection}.
 */
export function createSqliteHandle(path: string, options: OpenOptions = {}): DatabaseHandle {
  const file = resolve(path);
  const what = `Cannot open SQLite database ${file}`;
  const connection = new SqliteConnection(file, { busyTimeoutMs: SQLITE_BUSY_TIMEOUT_MS });
  const db = new SqliteClient({
    adapter: connection,
    transactionOptions: transactionOptions(options),
  }) as unknown as PrismaDb;
  registerRawConnection(db, { provider: 'sqlite', connection });
  return {
    db,
    provider: 'sqlite',
    migrate: () => {
      try {
        mkdirSync(dirname(file), { recursive: true });
        return Promise.resolve(migrateSqliteFile(file, options));
      } catch (error) {
        return Promise.reject(asOpenError(error, what));
      }
    },
    connect: async () => {
      try {
        // The connection applies its per-connection settings itself.
        await db.$connect();
      } catch (error) {
        throw asOpenError(error, what);
      }
    },
    close: once(() => db.$disconnect()),
  };
}

/**
 * A Postgres database behind a pool of `poolSize` connections (default
 * {@link DEFAULT_POSTGRES_POOL_SIZE}); `migrate()` runs under an advisory lock, so several
 * processes starting at once against one database are safe. The checkpointer's hot path queries
 * the same pool directly (see `raw-connections.ts`).
 */
export function createPostgresHandle(
  url: string,
  options: OpenOptions & { poolSize?: number } = {},
): DatabaseHandle {
  const what = `Cannot open PostgreSQL database ${redactUrl(url)}`;
  const pool = new pg.Pool({
    connectionString: url,
    max: options.poolSize ?? DEFAULT_POSTGRES_POOL_SIZE,
    // The raw checkpointer takes clients from this pool directly: without a bound, a full pool
    // would make a put wait forever instead of failing UNAVAILABLE like Prisma's `maxWait`.
    connectionTimeoutMillis: transactionOptions(options).maxWait,
  });
  guardPoolErrors(pool);
  const db = new PostgresClient({
    adapter: new PrismaPg(pool),
    transactionOptions: transactionOptions(options),
  });
  registerRawConnection(db, { provider: 'postgresql', pool });
  return {
    db,
    provider: 'postgresql',
    migrate: async () => {
      try {
        return await migratePostgresPool(pool, options);
      } catch (error) {
        throw asOpenError(error, what);
      }
    },
    connect: async () => {
      try {
        await db.$connect();
      } catch (error) {
        throw asOpenError(error, what);
      }
    },
    close: once(async () => {
      await db.$disconnect();
      await pool.end();
    }),
    poolStats: () => ({ size: pool.totalCount, idle: pool.idleCount, waiting: pool.waitingCount }),
  };
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

function asOpenError(error: unknown, what: string): StorageError {
  if (error instanceof StorageError) return error;
  const reason = error instanceof Error ? error.message : String(error);
  return new StorageError('UNAVAILABLE', `${what}: ${reason}`, { cause: error });
}
