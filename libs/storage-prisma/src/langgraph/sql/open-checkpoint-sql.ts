import { StorageError } from '@cognition/storage';
import type { DatabaseProvider, PrismaDb } from '../../db/db';
import { rawConnectionOf } from '../../db/raw-connections';
import type { CheckpointSql } from './checkpoint-sql';
import { PostgresCheckpointSql } from './checkpoint-sql-postgres';
import { SqliteCheckpointSql } from './checkpoint-sql-sqlite';

/**
 * The SQL of `provider` on `db`, which must be a client made by this library
 * (`openSqlite`/`openPostgres`, `createSqliteHandle`/`createPostgresHandle`): the saver queries
 * the driver under it directly.
 */
export function checkpointSql(db: PrismaDb, provider: DatabaseProvider): CheckpointSql {
  const raw = rawConnectionOf(db);
  if (raw?.provider === 'sqlite' && provider === 'sqlite') {
    return new SqliteCheckpointSql(raw.connection);
  }
  if (raw?.provider === 'postgresql' && provider === 'postgresql') {
    return new PostgresCheckpointSql(raw.pool);
  }
  throw new StorageError(
    'STORAGE_ERROR',
    raw
      ? `PrismaCheckpointSaver: the Prisma client is ${raw.provider}, not ${provider}`
      : 'PrismaCheckpointSaver needs a Prisma client made by openSqlite/openPostgres or createSqliteHandle/createPostgresHandle',
  );
}

/**
 * The provider a Prisma client was generated for. Prisma keeps it on the client instance
 * (`_activeProvider`); callers that know the provider pass it explicitly instead.
 */
export function providerOf(db: PrismaDb): DatabaseProvider {
  const provider = (db as unknown as { _activeProvider?: unknown })._activeProvider;
  if (provider === 'sqlite' || provider === 'postgresql') return provider;
  throw new StorageError(
    'STORAGE_ERROR',
    `Cannot tell the database provider of this Prisma client (${String(provider)}); pass options.provider`,
  );
}
