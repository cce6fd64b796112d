import { cpSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Sqlite from 'better-sqlite3';
import { defaultMigrationsDir, migrate } from './migrate';

// Migration 20261128140000_message_session_key on a SQLite database that already holds messages:
// the rows and their search entries are kept, and another session may then use the same id.

const MIGRATION = '20261128140000_message_session_key';
let dir: string;

beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'cognition-message-key-migration-'));
});
afterEach(() => {
  rmSync(dir, { recursive: true, force: true });
});

it('keeps messages and their search entries, then takes the same id in another session', async () => {
  const all = defaultMigrationsDir('sqlite');
  const older = join(dir, 'older');
  cpSync(all, older, { recursive: true, filter: (source) => !source.includes(MIGRATION) });
  const path = join(dir, 'state.db');
  await migrate({ provider: 'sqlite', path, migrationsDir: older });
  const db = new Sqlite(path);
  try {
    const session = db.prepare('INSERT INTO sessions (id, thread_id) VALUES (?, ?)');
    session.run('s1', 't1');
    session.run('s2', 't2');
    const message = db.prepare(
      'INSERT INTO messages (id, session_id, seq, role, content) VALUES (?, ?, ?, ?, ?)',
    );
    message.run('initial-message', 's1', 0, 'user', 'walrus one');
    message.run('m2', 's1', 1, 'assistant', 'walrus two');
    // A search row whose message is gone (the triggers never leave one) must not stop it.
    db.prepare("INSERT INTO message_search_rows (message_id) VALUES ('gone')").run();
  } finally {
    db.close();
  }
  expect((await migrate({ provider: 'sqlite', path, migrationsDir: all })).applied).toEqual([
    MIGRATION,
  ]);
  const after = new Sqlite(path);
  const search = (): unknown[] =>
    after
      .prepare(
        `SELECT r.session_id, r.message_id FROM message_search
           JOIN message_search_rows r ON r.rid = message_search.rowid
         WHERE message_search MATCH 'walrus' ORDER BY r.session_id, r.message_id`,
      )
      .all();
  try {
    expect(after.prepare('SELECT id, session_id, seq FROM messages ORDER BY seq').all()).toEqual([
      { id: 'initial-message', session_id: 's1', seq: 0 },
      { id: 'm2', session_id: 's1', seq: 1 },
    ]);
    expect(search()).toEqual([
      { session_id: 's1', message_id: 'initial-message' },
      { session_id: 's1', message_id: 'm2' },
    ]);
    expect(after.prepare('SELECT message_id FROM message_search_rows ORDER BY rid').all()).toEqual([
      { message_id: 'initial-message' },
      { message_id: 'm2' },
    ]);
    after
      .prepare(
        `INSERT INTO messages (id, session_id, seq, role, content)
         VALUES ('initial-message', 's2', 0, 'user', 'walrus three')`,
      )
      .run();
    after.prepare(`DELETE FROM messages WHERE session_id = 's1' AND id = 'initial-message'`).run();
    expect(search()).toEqual([
      { session_id: 's1', message_id: 'm2' },
      { session_id: 's2', message_id: 'initial-message' },
    ]);
    expect(() =>
      after
        .prepare(
          `INSERT INTO messages (id, session_id, seq, role, content)
           VALUES ('initial-message', 's2', 1, 'user', 'again')`,
        )
        .run(),
    ).toThrow(/UNIQUE constraint failed: messages.session_id, messages.id/);
  } finally {
    after.close();
  }
});
