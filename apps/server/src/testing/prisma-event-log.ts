import { StorageEventLog } from '@cognition/runtime';
import type { EventLogHarnessFactory } from '@cognition/runtime/testing';
import type { DatabaseProvider } from '@cognition/storage-prisma';
import { createPrismaStorage } from '@cognition/storage-prisma';
import { createTestDatabase } from '@cognition/storage-prisma/testing';

/** `StorageEventLog` on a fresh database of `provider` per test, for the event log conformance. */
export function prismaEventLogHarness(provider: DatabaseProvider): EventLogHarnessFactory {
  return async ({ retain }) => {
    const db = await createTestDatabase(provider);
    const storage = createPrismaStorage(
      db.provider === 'sqlite'
        ? { provider: 'sqlite', path: db.path }
        : { provider: 'postgresql', url: db.url },
    );
    await storage.initialize();
    return {
      log: new StorageEventLog({ store: storage.events, retainPerSession: retain }),
      newSession: async () => (await storage.sessions.create({}, {})).id,
      deleteSession: async (id) => {
        await storage.sessions.delete(id, {});
      },
      cleanup: async () => {
        await storage.close();
        await db.cleanup();
      },
    };
  };
}
