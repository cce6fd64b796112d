import type { StorageBackend } from '@cognition/storage';
import { isStorageError } from '@cognition/storage';
import { runStorageConformance } from '@cognition/storage/testing';
import { createPrismaStorage } from './prisma-storage';
import type { TestDatabase } from './testing/test-db';
import { createTestDatabase } from './testing/test-db';
import { prismaConformanceFactory } from './testing/conformance-factory';

const postgres = prismaConformanceFactory('postgresql');
afterAll(() => postgres.teardown());
runStorageConformance('prisma (PostgreSQL)', postgres.factory);

describe('prisma storage (PostgreSQL): two processes on one database', () => {
  let database: TestDatabase;
  let nodes: StorageBackend[];

  beforeAll(async () => {
    database = await createTestDatabase('postgresql');
    if (database.provider !== 'postgresql') throw new Error('postgres expected');
    const url = database.url;
    // Two backends with their own pools stand for two server processes.
    nodes = [1, 2].map(() => createPrismaStorage({ provider: 'postgresql', url, poolSize: 3 }));
    await Promise.all(nodes.map((node) => node.initialize()));
  });
  afterAll(async () => {
    for (const node of nodes) await node.close();
    await database.cleanup();
  });

  const node = (index: number): StorageBackend => {
    const found = nodes[index % nodes.length];
    if (!found) throw new Error('no node');
    return found;
  };

  it('lets exactly one of many concurrent run creates across both nodes win', async () => {
    const session = await node(0).sessions.create({}, {});
    const results = await Promise.allSettled(
      Array.from({ length: 10 }, (_, i) => node(i).runs.create({ sessionId: session.id })),
    );
    const won = results.filter((r) => r.status === 'fulfilled');
    const lost = results.flatMap((r) => (r.status === 'rejected' ? [r.reason as unknown] : []));
    expect(won).toHaveLength(1);
    expect(lost.every((e) => isStorageError(e) && e.code === 'RUN_IN_PROGRESS')).toBe(true);
    expect(await node(1).runs.listActive()).toHaveLength(1);
  });

  it('gives 50 concurrent inserts from both nodes 50 rows with distinct positions and count 50', async () => {
    const session = await node(0).sessions.create({}, {});
    await Promise.all(
      Array.from({ length: 50 }, (_, i) =>
        node(i).messages.create({ sessionId: session.id, role: 'user', content: `m${i}` }),
      ),
    );
    const rows = await node(1).messages.listAll(session.id, {});
    expect(rows).toHaveLength(50);
    expect(new Set(rows.map((m) => m.content)).size).toBe(50);
    expect((await node(0).sessions.get(session.id, {}))?.messageCount).toBe(50);
  });

  it('reports pool figures bounded by poolSize, and an unhealthy status once closed', async () => {
    const url = database.provider === 'postgresql' ? database.url : '';
    const backend = createPrismaStorage({ provider: 'postgresql', url, poolSize: 2 });
    await backend.initialize();
    const health = await backend.healthCheck();
    expect(health).toMatchObject({ backend: 'postgres', ok: true });
    expect(health.pool?.size).toBeGreaterThanOrEqual(1);
    expect(health.pool?.size).toBeLessThanOrEqual(2);
    expect(health.pool?.waiting).toBe(0);
    await backend.close();
    const after = await backend.healthCheck();
    expect(after.ok).toBe(false);
    expect(after.error).toEqual(expect.any(String));
  });
});
