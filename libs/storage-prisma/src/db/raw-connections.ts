import type pg from 'pg';
import { StorageError } from '@cognition/storage';
import type { SqliteConnection, SqliteSession } from './sqlite-connection';

/**
 * What a Prisma client made by `createSqliteHandle`/`createPostgresHandle` runs on, for code
 * that talks to the driver directly (the checkpointer's hot path): Prisma's per-query cost is
 * most of the time of a small statement.
 */
export type RawConnection =
  { provider: 'sqlite'; connection: SqliteConnection } | { provider: 'postgresql'; pool: pg.Pool };

const connections = new WeakMap<object, RawConnection>();

/** Records what `client` (a Prisma client) runs on. */
export function registerRawConnection(client: object, connection: RawConnection): void {
  connections.set(client, connection);
}

/** The driver connection under a Prisma client made by this library, if it is one. */
export function rawConnectionOf(client: object): RawConnection | undefined {
  return connections.get(client);
}

/**
 * The driver connection under `client`, for the stores whose per-turn statements run on the
 * driver: every client of this library has one (`createSqliteHandle`/`createPostgresHandle`).
 * @throws StorageError STORAGE_ERROR when `client` is a Prisma client made elsewhere.
 */
export function requireRawConnection(client: object, what: string): RawConnection {
  const raw = connections.get(client);
  if (raw) return raw;
  throw new StorageError(
    'STORAGE_ERROR',
    `${what} needs a Prisma client made by openSqlite/openPostgres or createSqliteHandle/createPostgresHandle`,
  );
}

/**
 * Runs `fn` in an IMMEDIATE transaction on the connection (under its lock, so no other caller's
 * statement runs in between); `fn` must be synchronous, and throwing rolls back.
 */
export function inSqliteTransaction<T>(
  connection: SqliteConnection,
  fn: (session: SqliteSession) => T,
): Promise<T> {
  return connection.run((session) => session.database.transaction(() => fn(session)).immediate());
}

/**
 * Runs `fn` between BEGIN and COMMIT on one client of the pool; throwing rolls back. A client
 * whose ROLLBACK failed is in an unknown state and is destroyed instead of returned to the pool.
 */
export async function inPostgresTransaction<T>(
  pool: pg.Pool,
  fn: (client: pg.PoolClient) => Promise<T>,
): Promise<T> {
  const client = await pool.connect();
  let broken: Error | undefined;
  try {
    await client.query('BEGIN');
    const result = await fn(client);
    await client.query('COMMIT');
    return result;
  } catch (error) {
    await client.query('ROLLBACK').catch((rollbackError: unknown) => {
      broken = rollbackError instanceof Error ? rollbackError : new Error(String(rollbackError));
    });
    throw error;
  } finally {
    client.release(broken);
  }
}
