import { cpSync, mkdirSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Sqlite from 'better-sqlite3';
import { migrate } from '../db/migrate';
import { REPO_ROOT } from '../testing/prisma-cli';

const SQLITE_MIGRATIONS = join(REPO_ROOT, 'prisma/sqlite/migrations');
const FIRST_NEW = '20261125200000_usage_feedback';

/**
 * A database migrated before the usage tables existed, holding runs and messages, gets its
 * usage records and search index from the migrations that add them.
 */
describe('usage and search migrations on a database with history (SQLite)', () => {
  let dir: string;
  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'cognition-backfill-'));
  });
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  it('backfills session usage from the recorded runs and indexes the stored messages', async () => {
    const older = join(dir, 'older');
    mkdirSync(older);
    for (const name of readdirSync(SQLITE_MIGRATIONS)) {
      if (name < FIRST_NEW)
        cpSync(join(SQLITE_MIGRATIONS, name), join(older, name), { recursive: true });
    }
    const path = join(dir, 'state.db');
    await migrate({ provider: 'sqlite', path, migrationsDir: older });
    const db = new Sqlite(path);
    const at = (minute: number) => `2026-11-20T10:${String(minute).padStart(2, '0')}:00.000+00:00`;
    db.prepare(
      `INSERT INTO sessions (id, thread_id, status, agent_name, config, message_count, version, created_at, updated_at)
       VALUES ('s1', 't1', 'active', 'default', '{}', 1, 1, ?, ?)`,
    ).run(at(0), at(0));
    const run = db.prepare(
      `INSERT INTO runs (id, session_id, status, usage, created_at, started_at, finished_at, updated_at)
       VALUES (?, 's1', ?, ?, ?, ?, ?, ?)`,
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
    run.run('r1', 'completed', usage(100, 0.5, 'gpt-4o'), at(1), at(1), at(2), at(2));
    run.run('r2', 'failed', usage(200, null, 'mystery', true), at(3), at(3), at(4), at(4));
    run.run('r3', 'aborted', null, at(5), at(5), at(6), at(6));
    db.prepare(
      `INSERT INTO messages (id, session_id, seq, role, content, created_at)
       VALUES ('m1', 's1', 0, 'user', 'remember the zebra crossing', ?)`,
    ).run(at(0));
    db.close();

    await migrate({ provider: 'sqlite', path });
    const after = new Sqlite(path, { readonly: true });
    try {
      expect(after.prepare('SELECT * FROM session_usage').all()).toEqual([
        expect.objectContaining({
          session_id: 's1',
          tokens_in: 300,
          tokens_out: 20,
          estimated_tokens_in: 200,
          estimated_tokens_out: 10,
          cost_usd: 0.5,
          unpriced_calls: 1,
          runs: 3,
          error_count: 1,
          aborted_count: 1,
          started_at: at(1),
          last_activity_at: at(6),
          ended_at: at(6),
        }),
      ]);
      expect(
        after
          .prepare(
            'SELECT model, calls, tokens_in, cost_usd, unpriced_calls FROM session_model_usage ORDER BY model',
          )
          .all(),
      ).toEqual([
        { model: 'gpt-4o', calls: 1, tokens_in: 100, cost_usd: 0.5, unpriced_calls: 0 },
        { model: 'mystery', calls: 1, tokens_in: 200, cost_usd: 0, unpriced_calls: 1 },
      ]);
      expect(
        after
          .prepare(
            `SELECT r.message_id FROM message_search JOIN message_search_rows r ON r.rid = message_search.rowid
             WHERE message_search MATCH '"zebra"'`,
          )
          .all(),
      ).toEqual([{ message_id: 'm1' }]);
    } finally {
      after.close();
    }
  });
});
