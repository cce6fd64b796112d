import type { StorageBackend, StoreIndexConfig } from '@cognition/storage';
import { createMemoryStorage } from '@cognition/storage-memory';
import { createPrismaStorage, defaultMigrationsDir, migrate } from '@cognition/storage-prisma';
import type { MigrateResult } from '@cognition/storage-prisma';
import type { PersistenceConfig } from '../config';

/**
 * The one place that picks a storage implementation (ARCHITECTURE.md: only apps/server chooses
 * implementations). Migrations are read from `prisma/<provider>/migrations` of the repository
 * or deployment the server runs from.
 */
export function createStorage(
  persistence: PersistenceConfig,
  options: { artifactMaxBytes?: number; storeIndex?: StoreIndexConfig } = {},
): StorageBackend {
  const { artifactMaxBytes, storeIndex } = options;
  switch (persistence.backend) {
    case 'memory':
      return createMemoryStorage({
        artifacts: { maxBytes: artifactMaxBytes },
        ...(storeIndex ? { storeIndex } : {}),
      });
    case 'sqlite':
      return createPrismaStorage({
        provider: 'sqlite',
        path: persistence.path,
        migrationsDir: defaultMigrationsDir('sqlite'),
        artifactMaxBytes,
        ...(storeIndex ? { storeIndex } : {}),
      });
    case 'postgres':
      return createPrismaStorage({
        provider: 'postgresql',
        url: persistence.url,
        poolSize: persistence.poolSize,
        migrationsDir: defaultMigrationsDir('postgresql'),
        artifactMaxBytes,
        ...(storeIndex ? { storeIndex } : {}),
      });
  }
}

/** Applies pending migrations (the `cognition migrate` command); null for the memory backend. */
export async function migrateStorage(
  persistence: PersistenceConfig,
): Promise<MigrateResult | null> {
  switch (persistence.backend) {
    case 'memory':
      return null;
    case 'sqlite':
      return migrate({
        provider: 'sqlite',
        path: persistence.path,
        migrationsDir: defaultMigrationsDir('sqlite'),
      });
    case 'postgres':
      return migrate({
        provider: 'postgresql',
        url: persistence.url,
        migrationsDir: defaultMigrationsDir('postgresql'),
      });
  }
}
