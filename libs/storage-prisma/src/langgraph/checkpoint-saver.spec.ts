import type { CheckpointSaverTestInitializer } from '@langchain/langgraph-checkpoint-validation';
import type { OpenedDatabase } from '../db';
import { openSqlite } from '../db';
import type { TestDatabase } from '../testing-db';
import { createTestDatabase } from '../testing-db';
import { PrismaCheckpointSaver } from './checkpoint-saver';

// The validation package is consumed through CommonJS (its vitest CLI cannot load initializers
// here); `validate` registers its describe/it blocks on jest's globals.
// eslint-disable-next-line @typescript-eslint/no-require-imports
const { validate } = require('@langchain/langgraph-checkpoint-validation') as {
  validate: (initializer: CheckpointSaverTestInitializer<PrismaCheckpointSaver>) => void;
};

let database: TestDatabase;
let opened: OpenedDatabase;

validate({
  checkpointerName: 'PrismaCheckpointSaver (sqlite)',
  async beforeAll() {
    database = await createTestDatabase('sqlite');
    if (database.provider !== 'sqlite') throw new Error('expected a SQLite test database');
    opened = await openSqlite(database.path);
  },
  async afterAll() {
    await opened.close();
    await database.cleanup();
  },
  createCheckpointer: () => new PrismaCheckpointSaver(opened.db),
  // Each suite expects an empty database (list without thread_id sees every row).
  async destroyCheckpointer() {
    await opened.db.checkpointWrite.deleteMany();
    await opened.db.checkpoint.deleteMany();
  },
});
