import type pg from 'pg';
import type { SqliteConnection } from './sqlite-connection';

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
