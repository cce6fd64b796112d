import { measurePruning } from '../testing/checkpoint-retention-size-cases';

// The checkpoint tables (after VACUUM FULL) before and after pruning a 1,000-step thread.
it('shrinks the PostgreSQL checkpoint tables when a 1,000-step thread is pruned to keep_last:10', async () => {
  const { before, after, deleted, rows } = await measurePruning('postgresql');
  expect(deleted).toBe(990);
  expect(rows).toBe(20);
  expect(after).toBeLessThan(before / 5);
  process.stdout.write(
    `PostgreSQL checkpoint tables: ${before} bytes before, ${after} bytes after pruning\n`,
  );
}, 180_000);
