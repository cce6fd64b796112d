import { mkdirSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import { PrismaClient as SqliteClient } from '../generated/sqlite/client';
import type { DatabaseHandle, OpenOptions, PrismaDb } from './handle';
import { asOpenError, once, transactionOptions } from './handle';
import { migrateSqliteFile } from './migrate';
import { registerRawConnection } from './raw-connections';
import { SqliteConnection } from './sqlite-connection';

/** How long a SQLite connection waits for another process's write lock before SQLITE_BUSY. */
const SQLITE_BUSY_TIMEOUT_MS = 10_000;

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
