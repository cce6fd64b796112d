import { measurePruning } from '../testing/checkpoint-retention-size-cases';

// The SQLite file (after VACUUM) before and after pruning a 1,000-step thread to keep_last:10.
it('shrinks the SQLite database when a 1,000-step thread is pruned to keep_last:10', async () => {
  const { before, after, deleted, rows } = await measurePruning('sqlite');
  expect(deleted).toBe(990);
  expect(rows).toBe(20);
  expect(after).toBeLessThan(before / 5);
  process.stdout.write(`SQLite database: ${before} bytes before, ${after} bytes after pruning\n`);
}, 180_000);
