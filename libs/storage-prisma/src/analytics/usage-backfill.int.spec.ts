import { cpSync, mkdirSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { migrate } from '../db/migrate';
import { REPO_ROOT } from '../testing/prisma-cli';
import type { TestDatabase } from '../testing/test-db';
import { createTestDatabase } from '../testing/test-db';

const PG_MIGRATIONS = join(REPO_ROOT, 'prisma/postgres/migrations');
const FIRST_NEW = '20261125200000_usage_feedback';

describe('usage and search migrations on a database with history (PostgreSQL)', () => {
  let dir: string;
  let database: TestDatabase;
  beforeEach(async () => {
    dir = mkdtempSync(join(tmpdir(), 'cognition-backfill-pg-'));
    database = await createTestDatabase('postgresql');
  });
  afterEach(async () => {
    rmSync(dir, { recursive: true, force: true });
    await database.cleanup();
  });

  it('backfills session usage from the recorded runs; the search index covers stored messages', async () => {
    if (database.provider !== 'postgresql') throw new Error('postgres expected');
    const older = join(dir, 'older');
    mkdirSync(older);
    for (const name of readdirSync(PG_MIGRATIONS)) {
      if (name < FIRST_NEW)
        cpSync(join(PG_MIGRATIONS, name), join(older, name), { recursive: true });
    }
    await migrate({ provider: 'postgresql', url: database.url, migrationsDir: older });
    const client = new pg.Client({ connectionString: database.url });
    await client.connect();
    try {
      const at = (minute: number) => `2026-11-20 10:${String(minute).padStart(2, '0')}:00`;
      await client.query(
        `INSERT INTO sessions (id, thread_id, created_at, updated_at) VALUES ('s1', 't1', $1, $1)`,
        [at(0)],
      );
      const usage = (tokensIn: number, cost: number | null, model: string, estimated = false) =>
        JSON.stringify({
          inputTokens: tokensIn,
          outputTokens: 10,
          costUsd: cost,
          model,
          provider: 'openai',
          estimated,
        });
      for (const [id, status, u, minute] of [
        ['r1', 'completed', usage(100, 0.5, 'gpt-4o'), 1],
        ['r2', 'failed', usage(200, null, 'mystery', true), 3],
        ['r3', 'aborted', null, 5],
      ] as const) {
        await client.query(
          `INSERT INTO runs (id, session_id, status, usage, created_at, started_at, finished_at, updated_at)
           VALUES ($1, 's1', $2, $3, $4, $4, $5, $5)`,
          [id, status, u, at(minute), at(minute + 1)],
        );
      }
      await client.query(
        `INSERT INTO messages (id, session_id, seq, role, content, created_at)
         VALUES ('m1', 's1', 0, 'user', 'remember the zebra crossing', $1)`,
        [at(0)],
      );
      await migrate({ provider: 'postgresql', url: database.url });
      const totals = await client.query(
        `SELECT tokens_in, tokens_out, estimated_tokens_in, cost_usd, unpriced_calls, runs,
           error_count, aborted_count, to_char(started_at, 'HH24:MI') AS started,
           to_char(ended_at, 'HH24:MI') AS ended FROM session_usage WHERE session_id = 's1'`,
      );
      expect(totals.rows).toEqual([
        {
          tokens_in: 300,
          tokens_out: 20,
          estimated_tokens_in: 200,
          cost_usd: 0.5,
          unpriced_calls: 1,
          runs: 3,
          error_count: 1,
          aborted_count: 1,
          started: '10:01',
          ended: '10:06',
        },
      ]);
      const models = await client.query(
        'SELECT model, calls, tokens_in, unpriced_calls FROM session_model_usage ORDER BY model',
      );
      expect(models.rows).toEqual([
        { model: 'gpt-4o', calls: 1, tokens_in: 100, unpriced_calls: 0 },
        { model: 'mystery', calls: 1, tokens_in: 200, unpriced_calls: 1 },
      ]);
      const found = await client.query(
        `SELECT id FROM messages WHERE to_tsvector('simple'::regconfig, left(content, 100000)) @@ to_tsquery('simple', 'zebra')`,
      );
      expect(found.rows).toEqual([{ id: 'm1' }]);
    } finally {
      await client.end();
    }
  });
});
