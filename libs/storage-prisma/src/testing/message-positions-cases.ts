import { cpSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { StorageBackend } from '@cognition/storage';
import { putMessagesCheckpoint } from '@cognition/storage/testing';
import { AIMessage, HumanMessage } from '@langchain/core/messages';
import type { BaseMessage } from '@langchain/core/messages';
import Sqlite from 'better-sqlite3';
import pg from 'pg';
import type { DatabaseProvider } from '../db/migrate';
import { defaultMigrationsDir, migrate, readMigrations } from '../db/migrate';
import { createSqliteHandle } from '../db/db';
import { createPrismaStorage } from '../prisma-storage';
import type { TestDatabase } from './test-db';
import { createTestDatabase } from './test-db';

// Shared by message-positions.spec.ts (SQLite) and message-positions.int.spec.ts (PostgreSQL):
// the dense `seq` invariant paging relies on, checked on the rows themselves, where the
// conformance suite can only see it through pages.

type Row = Record<string, unknown>;

interface RawSql {
  /** Plain SQL with `$n` placeholders (rewritten to `?` for SQLite). */
  run(sql: string, params?: unknown[]): Promise<Row[]>;
  close(): Promise<void>;
}

/**
 * A connection of its own, behind the backend's back. On SQLite it goes through the Prisma
 * adapter's copy of better-sqlite3, the SQLite library the backend uses: a second SQLite library
 * in one process does not see the first one's POSIX locks, so its connections must not share a
 * file with the backend's.
 */
async function rawSql(database: TestDatabase): Promise<RawSql> {
  if (database.provider === 'sqlite') {
    const handle = createSqliteHandle(database.path);
    await handle.connect();
    return {
      run: async (sql, params = []) => {
        const text = sql.replace(/\$\d+/g, '?');
        if (/^\s*SELECT/i.test(text)) return handle.db.$queryRawUnsafe<Row[]>(text, ...params);
        await handle.db.$executeRawUnsafe(text, ...params);
        return [];
      },
      close: () => handle.close(),
    };
  }
  const client = new pg.Client({ connectionString: database.url });
  await client.connect();
  return {
    run: async (sql, params = []) => (await client.query<Row>(sql, params)).rows,
    close: () => client.end(),
  };
}

/** Better-sqlite3's own copy, for a file no backend has open (the migrator uses it too). */
async function sqlOnClosedFile(
  database: TestDatabase,
  sql: string,
  params: unknown[] = [],
): Promise<Row[]> {
  if (database.provider === 'sqlite') {
    const db = new Sqlite(database.path, { timeout: 10_000 });
    try {
      const statement = db.prepare(sql.replace(/\$\d+/g, '?'));
      if (statement.reader) return statement.all(...params) as Row[];
      statement.run(...params);
      return [];
    } finally {
      db.close();
    }
  }
  const raw = await rawSql(database);
  try {
    return await raw.run(sql, params);
  } finally {
    await raw.close();
  }
}

const seqsOf = async (raw: RawSql, sessionId: string): Promise<number[]> =>
  (await raw.run('SELECT seq FROM messages WHERE session_id = $1 ORDER BY seq', [sessionId])).map(
    (row) => Number(row['seq']),
  );

const positions = (count: number): number[] => Array.from({ length: count }, (_, i) => i);

function backendOn(database: TestDatabase): StorageBackend {
  return database.provider === 'sqlite'
    ? createPrismaStorage({ provider: 'sqlite', path: database.path })
    : createPrismaStorage({ provider: 'postgresql', url: database.url, poolSize: 6 });
}

/**
 * Runs `fn` on an initialized backend over `database`, closed afterwards; `sql()` opens a raw
 * connection of its own on first use (see {@link rawSql}), closed with it.
 */
async function withBackend(
  database: TestDatabase,
  fn: (backend: StorageBackend, sql: () => Promise<RawSql>) => Promise<void>,
): Promise<void> {
  const backend = backendOn(database);
  let raw: Promise<RawSql> | undefined;
  try {
    await backend.initialize();
    await fn(backend, () => (raw ??= rawSql(database)));
  } finally {
    await (await raw?.catch(() => undefined))?.close();
    await backend.close();
  }
}

export function runMessagePositionSpecs(provider: DatabaseProvider): void {
  const label = provider === 'sqlite' ? 'SQLite' : 'PostgreSQL';

  describe(`message positions (${label})`, () => {
    let database: TestDatabase;
    beforeEach(async () => {
      database = await createTestDatabase(provider);
    });
    afterEach(async () => {
      await database.cleanup();
    });

    it('keeps seq exactly 0 … count − 1 through appends, reorders, removals and repairs', async () => {
      await withBackend(database, async (backend, sql) => {
        const raw = await sql();
        const session = await backend.sessions.create({}, {});
        const history: BaseMessage[] = [0, 1, 2, 3].map((i) =>
          i % 2 === 0
            ? new HumanMessage({ id: `h${i}`, content: `q${i}` })
            : new AIMessage({ id: `a${i}`, content: `a${i}` }),
        );
        await putMessagesCheckpoint(backend, session.threadId, history);
        await backend.messages.create({ sessionId: session.id, role: 'user', content: 'p1' });
        await backend.messages.create({ sessionId: session.id, role: 'user', content: 'p2' });
        expect(await seqsOf(raw, session.id)).toEqual(positions(6));
        // Reversed, one removed, one new: every surviving row moves, the pending ones stay last.
        const [h0, a1, h2, a3] = history as [BaseMessage, BaseMessage, BaseMessage, BaseMessage];
        await putMessagesCheckpoint(
          backend,
          session.threadId,
          [a3, h2, new AIMessage({ id: 'n', content: 'new' }), h0],
          { step: 5 },
        );
        expect(await seqsOf(raw, session.id)).toEqual(positions(6));
        const ids = (await backend.messages.listAll(session.id, {})).map((m) => m.id);
        expect(ids.slice(0, 4)).toEqual(['a3', 'h2', 'n', 'h0']);
        expect(await backend.messages.get(session.id, a1.id as string, {})).toBeNull();
        // A gap left by a hand edit (count adjusted to match) is closed by initialize().
        await raw.run("DELETE FROM messages WHERE id = 'h2'");
        await raw.run('UPDATE sessions SET message_count = 5 WHERE id = $1', [session.id]);
        await backend.initialize();
        expect(await seqsOf(raw, session.id)).toEqual(positions(6));
        expect((await backend.messages.listAll(session.id, {})).map((m) => m.id)).toEqual(ids);
        expect((await backend.sessions.get(session.id, {}))?.messageCount).toBe(6);
        // So is a negative position: the rewrite parks moving rows below the lowest one.
        await raw.run("UPDATE messages SET seq = -1 WHERE id = 'h0'");
        await backend.initialize();
        expect(await seqsOf(raw, session.id)).toEqual(positions(6));
        expect((await backend.messages.listAll(session.id, {})).map((m) => m.id)).toEqual(ids);
      });
    });

    // Message ids are unique per session: another session's row of the same id is no clash.
    it('projects a message id another session holds at its own position, leaving the other row', async () => {
      await withBackend(database, async (backend, sql) => {
        const raw = await sql();
        const first = await backend.sessions.create({}, {});
        const second = await backend.sessions.create({}, {});
        await putMessagesCheckpoint(backend, first.threadId, [
          new HumanMessage({ id: 'shared', content: 'mine' }),
        ]);
        await putMessagesCheckpoint(backend, second.threadId, [
          new HumanMessage({ id: 'before', content: 'first' }),
          new HumanMessage({ id: 'shared', content: 'theirs' }),
        ]);
        expect(await seqsOf(raw, first.id)).toEqual([0]);
        expect(await seqsOf(raw, second.id)).toEqual([0, 1]);
        expect((await backend.messages.listAll(first.id, {})).map((m) => m.content)).toEqual([
          'mine',
        ]);
      });
    });

    // The projection runs on the raw drivers; their constraint errors map like Prisma's.
    it('fails a put holding one message id twice with CONFLICT, writing nothing', async () => {
      await withBackend(database, async (backend) => {
        const session = await backend.sessions.create({}, {});
        await expect(
          putMessagesCheckpoint(backend, session.threadId, [
            new HumanMessage({ id: 'twice', content: 'one' }),
            new HumanMessage({ id: 'twice', content: 'two' }),
          ]),
        ).rejects.toMatchObject({ name: 'StorageError', code: 'CONFLICT' });
        expect(await backend.messages.listAll(session.id, {})).toEqual([]);
      });
    });

    // The projection writes timestamps with raw SQL; they must read back through Prisma as the
    // instant of the put (the format Prisma's SQLite adapter stores, UTC on PostgreSQL).
    it('stamps new projected rows and the session with the time of the put', async () => {
      await withBackend(database, async (backend) => {
        const session = await backend.sessions.create({}, {});
        const before = Date.now();
        await putMessagesCheckpoint(backend, session.threadId, [
          new HumanMessage({ id: 'stamped', content: 'q' }),
        ]);
        const after = Date.now();
        const [row] = await backend.messages.listAll(session.id, {});
        const updated = await backend.sessions.get(session.id, {});
        for (const stamp of [row?.createdAt.getTime(), updated?.updatedAt.getTime()]) {
          expect(stamp).toBeGreaterThanOrEqual(before);
          expect(stamp).toBeLessThanOrEqual(after);
        }
      });
    });

    it('gives concurrent inserts and checkpoint rewrites of one session distinct, dense positions', async () => {
      await withBackend(database, async (backend, sql) => {
        const raw = await sql();
        const session = await backend.sessions.create({}, {});
        const turns: BaseMessage[] = [];
        const puts = Array.from({ length: 8 }, (_, i) => {
          turns.push(new HumanMessage({ id: `c${i}`, content: `turn ${i}` }));
          return putMessagesCheckpoint(backend, session.threadId, [...turns]);
        });
        const inserts = Array.from({ length: 24 }, (_, i) =>
          backend.messages.create({ sessionId: session.id, role: 'user', content: `d${i}` }),
        );
        const results = await Promise.allSettled([...puts, ...inserts]);
        expect(results.filter((result) => result.status === 'rejected')).toEqual([]);
        const rows = await backend.messages.listAll(session.id, {});
        expect(rows.filter((m) => m.content.startsWith('d'))).toHaveLength(24);
        expect(rows.slice(0, 8).map((m) => m.id)).toEqual(turns.map((m) => m.id));
        expect(await seqsOf(raw, session.id)).toEqual(positions(rows.length));
        expect((await backend.sessions.get(session.id, {}))?.messageCount).toBe(rows.length);
      });
    }, 60_000);

    it('renumbers rows of an older database densely, in their old page order, when migrating', async () => {
      const onlyInit = mkdtempSync(join(tmpdir(), 'cognition-migrations-'));
      try {
        const committed = defaultMigrationsDir(provider);
        const [init, ...later] = readMigrations(committed);
        if (!init || later.length === 0) throw new Error('expected the init migration and more');
        cpSync(join(committed, init.name), join(onlyInit, init.name), { recursive: true });
        expect(readdirSync(onlyInit)).toEqual([init.name]);
        const target =
          database.provider === 'sqlite'
            ? ({ provider: 'sqlite', path: database.path } as const)
            : ({ provider: 'postgresql', url: database.url } as const);
        await migrate({ ...target, migrationsDir: onlyInit });
        await sqlOnClosedFile(
          database,
          "INSERT INTO sessions (id, thread_id) VALUES ('s1', 't1'), ('s2', 't2')",
        );
        // Duplicates, gaps and a negative position, as an old counter-based insert could leave.
        const old: [string, string, number, string][] = [
          ['m-late', 's1', 2, '2026-01-01T00:00:03Z'],
          ['m-first', 's1', 0, '2026-01-01T00:00:01Z'],
          ['m-dup-b', 's1', 2, '2026-01-01T00:00:02Z'],
          ['m-dup-a', 's1', 2, '2026-01-01T00:00:02Z'],
          ['m-far', 's1', 40, '2026-01-01T00:00:00Z'],
          ['x-neg', 's2', -3, '2026-01-01T00:00:09Z'],
          ['x-pos', 's2', 7, '2026-01-01T00:00:00Z'],
        ];
        for (const [id, sessionId, seq, createdAt] of old) {
          await sqlOnClosedFile(
            database,
            'INSERT INTO messages (id, session_id, seq, role, content, created_at) VALUES ($1, $2, $3, $4, $5, $6)',
            [id, sessionId, seq, 'user', id, createdAt],
          );
        }
        const result = await migrate(target);
        expect(result.applied).toEqual(later.map((file) => file.name));
        const rows = await sqlOnClosedFile(
          database,
          'SELECT id, session_id, seq FROM messages ORDER BY session_id, seq',
        );
        expect(rows.map((row) => `${String(row['id'])}@${Number(row['seq'])}`)).toEqual([
          'm-first@0',
          'm-dup-a@1',
          'm-dup-b@2',
          'm-late@3',
          'm-far@4',
          'x-neg@0',
          'x-pos@1',
        ]);
        // Compared as text: better-sqlite3 builds its errors in the realm that loaded it first,
        // which need not be this test file's, so `toThrow` would not recognise them.
        const clash = await sqlOnClosedFile(
          database,
          "INSERT INTO messages (id, session_id, seq, role, content) VALUES ('clash', 's1', 4, 'user', 'x')",
        ).then(
          () => 'inserted',
          (error: unknown) => String(error),
        );
        expect(clash).toMatch(/unique/i);
      } finally {
        rmSync(onlyInit, { recursive: true, force: true });
      }
    });
  });
}
