import { StorageError } from '@cognition/storage';
import type { Prisma, PrismaClient as PostgresClient } from '../generated/postgres/client';
import type { DatabaseProvider, MigrateOptions, MigrateResult } from './migrate';

/**
 * The one client type both providers satisfy. Both generated clients come from the same model
 * source, so their model APIs are identical; the SQLite client is typed as the Postgres one.
 * Provider-specific behaviour (raw SQL dialects, `mode: 'insensitive'`, ...) must not be used
 * through this type.
 */
export type PrismaDb = PostgresClient;

/** The client of an interactive transaction (`db.$transaction(async (tx) => ...)`). */
export type PrismaTx = Prisma.TransactionClient;

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

export function transactionOptions(options: OpenOptions): { maxWait: number; timeout: number } {
  return {
    maxWait: options.transactionMaxWaitMs ?? 10_000,
    timeout: options.transactionTimeoutMs ?? 30_000,
  };
}

export function once(fn: () => Promise<void>): () => Promise<void> {
  let closing: Promise<void> | undefined;
  return () => (closing ??= fn());
}

export function asOpenError(error: unknown, what: string): StorageError {
  if (error instanceof StorageError) return error;
  const reason = error instanceof Error ? error.message : String(error);
  return new StorageError('UNAVAILABLE', `${what}: ${reason}`, { cause: error });
}
