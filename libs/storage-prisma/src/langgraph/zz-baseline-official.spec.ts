import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { SqliteSaver } from '@langchain/langgraph-checkpoint-sqlite';
const { validate } = require('@langchain/langgraph-checkpoint-validation');
const dir = mkdtempSync(join(tmpdir(), 'official-sqlite-'));
let saver: SqliteSaver;
validate({
  checkpointerName: '@langchain/langgraph-checkpoint-sqlite',
  beforeAll() {
    saver = SqliteSaver.fromConnString(join(dir, 'x.db'));
  },
  afterAll() {
    rmSync(dir, { recursive: true, force: true });
  },
  createCheckpointer: () => saver,
  destroyCheckpointer() {
    (saver as any).db.exec('DELETE FROM checkpoints; DELETE FROM writes;');
  },
});
