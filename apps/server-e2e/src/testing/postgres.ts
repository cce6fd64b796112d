import { createTestDatabase as createDatabase } from '@cognition/storage-prisma/testing';
import { tempWorkspace } from './server-process';

/**
 * A fresh PostgreSQL database for one spec file, on the server of `COGNITION_TEST_POSTGRES_URL`
 * (default: the one `npm test` provisions on 127.0.0.1:5432); `drop()` removes it (after the
 * server has stopped). An unreachable server fails with the provisioning message.
 */
export async function createTestDatabase(): Promise<{ url: string; drop(): Promise<void> }> {
  const database = await createDatabase('postgresql');
  if (database.provider !== 'postgresql') throw new Error('expected a PostgreSQL test database');
  return { url: database.url, drop: () => database.cleanup() };
}

/** A database the spawned server is pointed at: its settings, its URL, and how to remove it. */
export interface ServerDatabase {
  env: Record<string, string>;
  /** The SQLite file or the PostgreSQL URL (for specs that also open the storage directly). */
  storageUrl: string;
  drop(): Promise<void>;
}

/** A fresh SQLite file in its own temporary directory. */
export function sqliteServerDatabase(prefix: string): Promise<ServerDatabase> {
  const dir = tempWorkspace(prefix);
  const file = `${dir.dir}/state.db`;
  return Promise.resolve({
    env: { COGNITION_PERSISTENCE_URI: file },
    storageUrl: file,
    drop: () => Promise.resolve(dir.remove()),
  });
}

/** A fresh PostgreSQL database (see `createTestDatabase`). */
export async function postgresServerDatabase(): Promise<ServerDatabase> {
  const db = await createTestDatabase();
  return {
    env: { COGNITION_PERSISTENCE_BACKEND: 'postgres', COGNITION_PERSISTENCE_URI: db.url },
    storageUrl: db.url,
    drop: () => db.drop(),
  };
}
