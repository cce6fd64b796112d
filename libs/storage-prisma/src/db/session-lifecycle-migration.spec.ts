import { cpSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Sqlite from 'better-sqlite3';
import { defaultMigrationsDir, migrate } from './migrate';

// Migration 20261125100000_session_lifecycle on a database that already holds sessions.

const MIGRATION = '20261125100000_session_lifecycle';
let dir: string;

beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'cognition-lifecycle-migration-'));
});
afterEach(() => {
  rmSync(dir, { recursive: true, force: true });
});

it('keeps existing sessions: last activity = last update, terminal ones ended then', async () => {
  const all = defaultMigrationsDir('sqlite');
  const older = join(dir, 'older');
  cpSync(all, older, {
    recursive: true,
    filter: (source) => !source.includes(MIGRATION) && !/2026112510\d{4}_/.test(source),
  });
  const path = join(dir, 'state.db');
  await migrate({ provider: 'sqlite', path, migrationsDir: older });
  const updated = '2026-01-02T03:04:05.000+00:00';
  const db = new Sqlite(path);
  try {
    const insert = db.prepare(
      `INSERT INTO sessions (id, thread_id, status, created_at, updated_at) VALUES (?, ?, ?, ?, ?)`,
    );
    insert.run('s-active', 't-active', 'active', updated, updated);
    insert.run('s-done', 't-done', 'completed', updated, updated);
  } finally {
    db.close();
  }
  const result = await migrate({ provider: 'sqlite', path, migrationsDir: all });
  expect(result.applied).toContain(MIGRATION);
  const after = new Sqlite(path, { readonly: true });
  try {
    const rows = after
      .prepare('SELECT id, last_activity_at, ended_at FROM sessions ORDER BY id')
      .all() as { id: string; last_activity_at: string; ended_at: string | null }[];
    expect(rows).toEqual([
      { id: 's-active', last_activity_at: updated, ended_at: null },
      { id: 's-done', last_activity_at: updated, ended_at: updated },
    ]);
  } finally {
    after.close();
  }
});
