import { createTestDatabase as createDatabase } from '@cognition/storage-prisma';

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
