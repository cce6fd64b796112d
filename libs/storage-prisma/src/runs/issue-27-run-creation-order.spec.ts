import type { StorageBackend } from '@cognition/storage';
import { createPrismaStorage } from '../prisma-storage';
import type { TestDatabase } from '../testing/test-db';
import { createTestDatabase } from '../testing/test-db';

/**
 * Issue 27: run creates on the driver take well under a millisecond, so two creates could
 * share `created_at`, and lists ordered by (created_at, id) then put them in the random order
 * of their ids. A store keeps its creates strictly ordered in time.
 */
describe('issue 27: runs created within one millisecond keep their order', () => {
  let database: TestDatabase;
  let backend: StorageBackend;

  beforeAll(async () => {
    database = await createTestDatabase('sqlite');
    if (database.provider !== 'sqlite') throw new Error('sqlite expected');
    backend = createPrismaStorage({ provider: 'sqlite', path: database.path });
    await backend.initialize();
  });

  afterAll(async () => {
    await backend.close();
    await database.cleanup();
  });

  it('lists pending runs in creation order', async () => {
    const session = await backend.sessions.create({}, {});
    const created: string[] = [];
    for (let i = 0; i < 30; i += 1) {
      const { run } = await backend.runs.create({
        sessionId: session.id,
        status: 'pending',
        pendingInput: { messageId: `m-${i}`, content: 'q', parentId: null, metadata: {} },
      });
      created.push(run.id);
    }
    expect((await backend.runs.listPending(session.id)).map((run) => run.id)).toEqual(created);
    const times = (await backend.runs.list(session.id)).map((run) => run.createdAt.getTime());
    expect(new Set(times).size).toBe(created.length);
  });
});
