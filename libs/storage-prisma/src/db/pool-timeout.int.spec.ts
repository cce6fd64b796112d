import { emptyCheckpoint } from '@langchain/langgraph-checkpoint';
import { createPostgresHandle } from './db';
import { PrismaCheckpointSaver } from '../langgraph/checkpoint-saver';
import { rawConnectionOf } from './raw-connections';
import { createTestDatabase } from '../testing/test-db';

// The checkpointer takes clients from the pool itself (not through Prisma), so the pool's own
// wait bound is what turns "no connection free" into a clear, typed failure instead of a hang.
describe('PostgreSQL pool exhaustion', () => {
  it('fails a checkpoint put UNAVAILABLE once the wait passes transactionMaxWaitMs', async () => {
    const database = await createTestDatabase('postgresql');
    if (database.provider !== 'postgresql') throw new Error('postgres expected');
    const handle = createPostgresHandle(database.url, { poolSize: 1, transactionMaxWaitMs: 300 });
    try {
      await handle.migrate();
      await handle.connect();
      const raw = rawConnectionOf(handle.db);
      if (raw?.provider !== 'postgresql') throw new Error('pool expected');
      const held = await raw.pool.connect();
      try {
        const saver = new PrismaCheckpointSaver(handle.db);
        await expect(
          saver.put(
            { configurable: { thread_id: 't1', checkpoint_ns: '' } },
            emptyCheckpoint(),
            { source: 'input', step: -1, parents: {} },
            {},
          ),
        ).rejects.toMatchObject({ name: 'StorageError', code: 'UNAVAILABLE' });
      } finally {
        held.release();
      }
    } finally {
      await handle.close();
      await database.cleanup();
    }
  });
});
