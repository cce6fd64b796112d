import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { StorageError } from '@cognition/storage';
import { expectStorageError, runStorageConformance } from '@cognition/storage/testing';
import { createPrismaStorage } from './prisma-storage';
import { createTestDatabase } from './testing/test-db';
import { prismaConformanceFactory } from './testing/conformance-factory';

const sqlite = prismaConformanceFactory('sqlite');
afterAll(() => sqlite.teardown());
runStorageConformance('prisma (SQLite)', sqlite.factory);

describe('prisma storage (SQLite) lifecycle', () => {
  it('rejects a malformed config with a VALIDATION_ERROR naming the field', () => {
    const attempt = (config: unknown) => () => createPrismaStorage(config as never);
    expect(attempt({ provider: 'sqlite', path: '' })).toThrow(StorageError);
    for (const [config, field] of [
      [{ provider: 'sqlite', path: '' }, 'path'],
      [{ provider: 'postgresql', url: 'mysql://x' }, 'url'],
      [{ provider: 'postgresql', url: 'postgresql://h/db', poolSize: 0 }, 'poolSize'],
      [{ provider: 'oracle' }, 'provider'],
    ] as const) {
      try {
        attempt(config)();
        throw new Error('accepted');
      } catch (error) {
        expect((error as StorageError).code).toBe('VALIDATION_ERROR');
        expect((error as StorageError).details.issues?.map((issue) => issue.path)).toContain(field);
      }
    }
  });

  it('creates the parent directories, initializes idempotently, reports health and refuses use after close', async () => {
    const database = await createTestDatabase('sqlite');
    if (database.provider !== 'sqlite') throw new Error('sqlite expected');
    const path = join(database.path, '..', 'nested', 'deeper', 'state.db');
    const backend = createPrismaStorage({ provider: 'sqlite', path });
    try {
      await Promise.all([backend.initialize(), backend.initialize()]);
      await backend.initialize();
      expect(existsSync(path)).toBe(true);
      expect(backend.kind).toBe('sqlite');
      const health = await backend.healthCheck();
      expect(health).toMatchObject({ backend: 'sqlite', ok: true });
      expect(health.latencyMs).toBeGreaterThanOrEqual(0);
      expect(health.pool).toBeUndefined();
      await backend.close();
      await backend.close();
      expect(await backend.healthCheck()).toMatchObject({
        ok: false,
        error: expect.any(String) as string,
      });
      await expectStorageError(backend.initialize(), 'UNAVAILABLE');
    } finally {
      await backend.close();
      await database.cleanup();
    }
  });
});
