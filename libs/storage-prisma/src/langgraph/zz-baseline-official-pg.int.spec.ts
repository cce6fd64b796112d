import { PostgresSaver } from '@langchain/langgraph-checkpoint-postgres';
import { createTestDatabase } from '../testing-db';
const { validate } = require('@langchain/langgraph-checkpoint-validation');
let saver: PostgresSaver;
let t: any;
validate({
  checkpointerName: 'official-postgres',
  async beforeAll() {
    t = await createTestDatabase('postgresql');
    saver = PostgresSaver.fromConnString(t.url);
    await saver.setup();
  },
  async afterAll() {
    await saver.end();
    await t.cleanup();
  },
  createCheckpointer: () => saver,
  async destroyCheckpointer() {
    await (saver as any).pool.query('TRUNCATE checkpoints, checkpoint_blobs, checkpoint_writes');
  },
});
