import { createHash } from 'node:crypto';
import {
  appendFileSync,
  cpSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  readdirSync,
  rmSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { StorageError } from '@cognition/storage';
import Sqlite from 'better-sqlite3';
import { build } from 'esbuild';
import { openSqlite } from './db';
import { defaultMigrationsDir, migrate, readMigrations } from './migrate';
import { prismaCli, REPO_ROOT as ROOT, runFile as run } from '../testing/prisma-cli';

const SQLITE_MIGRATIONS = join(ROOT, 'prisma/sqlite/migrations');

let dir: string;
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'cognition-migrate-'));
});
afterEach(() => rmSync(dir, { recursive: true, force: true }));

function rows(
  path: string,
): { migration_name: string; checksum: string; finished_at: string | null }[] {
  const db = new Sqlite(path, { readonly: true });
  try {
    return db
      .prepare(
        'SELECT migration_name, checksum, finished_at FROM _prisma_migrations ORDER BY migration_name',
      )
      .all() as never;
  } finally {
    db.close();
  }
}

function tables(path: string): string[] {
  const db = new Sqlite(path, { readonly: true });
  try {
    return (
      db.prepare("SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY name").all() as {
        name: string;
      }[]
    ).map((row) => row.name);
  } finally {
    db.close();
  }
}

/** A private copy of the committed migrations the test may extend or tamper with. */
function copyMigrations(): string {
  const target = join(dir, 'migrations');
  cpSync(SQLITE_MIGRATIONS, target, { recursive: true });
  return target;
}

function addMigration(migrationsDir: string, name: string, sql: string): void {
  mkdirSync(join(migrationsDir, name));
  writeFileSync(join(migrationsDir, name, 'migration.sql'), sql);
}

/** The sessions table's columns as the newest migration that (re)creates it defines them. */
const SESSION_COLUMNS = readdirSync(SQLITE_MIGRATIONS)
  .filter((name) => /^\d{14}_/.test(name))
  .sort()
  .map((name) => readFileSync(join(SQLITE_MIGRATIONS, name, 'migration.sql'), 'utf8'))
  .map((sql) => /CREATE TABLE "(?:new_)?sessions" \(([\s\S]*?)\n\);/.exec(sql)?.[1])
  .filter((columns): columns is string => columns !== undefined)
  .at(-1);

async function caught(promise: Promise<unknown>): Promise<StorageError> {
  try {
    await promise;
  } catch (error) {
    expect(error).toBeInstanceOf(StorageError);
    return error as StorageError;
  }
  throw new Error('expected a StorageError');
}

describe('migrator (SQLite)', () => {
  it('finds the committed migrations by default and reads them in folder order', () => {
    expect(defaultMigrationsDir('sqlite')).toBe(SQLITE_MIGRATIONS);
    expect(defaultMigrationsDir('postgresql')).toBe(join(ROOT, 'prisma/postgres/migrations'));
    const files = readMigrations(SQLITE_MIGRATIONS);
    expect(files.map((file) => file.name)).toEqual([...files.map((file) => file.name)].sort());
    expect(files[0]?.name).toBe('20261122000000_init');
  });

  it('applies every migration once, records it as Prisma does, and is idempotent', async () => {
    const path = join(dir, 'nested', 'dir', 'state.db');
    const first = await migrate({ provider: 'sqlite', path });
    expect(first.applied).toEqual(readMigrations(SQLITE_MIGRATIONS).map((file) => file.name));
    expect(tables(path)).toEqual(
      expect.arrayContaining([
        'sessions',
        'messages',
        'runs',
        'checkpoints',
        'checkpoint_writes',
        'store_items',
      ]),
    );
    const second = await migrate({ provider: 'sqlite', path });
    expect(second).toEqual({ applied: [], alreadyApplied: first.applied, unknown: [] });
    const recorded = rows(path);
    expect(recorded).toHaveLength(first.applied.length);
    const init = readFileSync(join(SQLITE_MIGRATIONS, '20261122000000_init', 'migration.sql'));
    expect(recorded[0]).toMatchObject({
      migration_name: '20261122000000_init',
      checksum: createHash('sha256').update(init).digest('hex'),
    });
    expect(recorded[0]?.finished_at).toMatch(/^\d{4}-\d\d-\d\dT/);
  });

  it("leaves a database Prisma's own engine sees as fully migrated", async () => {
    const path = join(dir, 'state.db');
    await migrate({ provider: 'sqlite', path });
    const stdout = await prismaCli(
      ['migrate', 'status', '--config', 'prisma/sqlite/prisma.config.ts'],
      {
        COGNITION_PRISMA_SQLITE_URL: `file:${path}`,
      },
    );
    expect(stdout).toContain('Database schema is up to date!');
  }, 60_000);

  it('refuses to run when an applied migration was edited', async () => {
    const migrationsDir = copyMigrations();
    const path = join(dir, 'state.db');
    await migrate({ provider: 'sqlite', path, migrationsDir });
    appendFileSync(join(migrationsDir, '20261122000000_init', 'migration.sql'), '\n-- edited\n');
    const error = await caught(migrate({ provider: 'sqlite', path, migrationsDir }));
    expect(error.code).toBe('STORAGE_ERROR');
    expect(error.message).toMatch(/20261122000000_init was modified after it was applied/);
  });

  it('applies a new migration after the applied ones, and rolls back a failing one whole', async () => {
    const migrationsDir = copyMigrations();
    const path = join(dir, 'state.db');
    await migrate({ provider: 'sqlite', path, migrationsDir });
    addMigration(
      migrationsDir,
      '20990101000000_add_notes',
      'CREATE TABLE "notes" ("id" TEXT NOT NULL PRIMARY KEY);\n',
    );
    expect((await migrate({ provider: 'sqlite', path, migrationsDir })).applied).toEqual([
      '20990101000000_add_notes',
    ]);

    addMigration(
      migrationsDir,
      '20990102000000_broken',
      'CREATE TABLE "half" ("id" TEXT);\nINSERT INTO "no_such_table" VALUES (1);\n',
    );
    const error = await caught(migrate({ provider: 'sqlite', path, migrationsDir }));
    expect(error.message).toMatch(/20990102000000_broken failed and was rolled back/);
    expect(tables(path)).not.toContain('half');
    expect(rows(path).map((row) => row.migration_name)).not.toContain('20990102000000_broken');
  });

  it('keeps child rows when a migration redefines a parent table (foreign keys off while migrating)', async () => {
    const migrationsDir = copyMigrations();
    const path = join(dir, 'state.db');
    const opened = await openSqlite(path, { migrationsDir });
    await opened.db.session.create({
      data: { id: 's1', threadId: 't1', createdAt: new Date(), updatedAt: new Date() },
    });
    await opened.db.message.create({
      data: {
        id: 'm1',
        sessionId: 's1',
        seq: 0,
        role: 'user',
        content: 'hi',
        createdAt: new Date(),
      },
    });
    await opened.close();
    // What Prisma writes for a SQLite column change: copy, drop and rename the parent table.
    addMigration(
      migrationsDir,
      '20990101000000_redefine_sessions',
      [
        'PRAGMA defer_foreign_keys=ON;',
        'PRAGMA foreign_keys=OFF;',
        `CREATE TABLE "new_sessions" (${SESSION_COLUMNS});`,
        'INSERT INTO "new_sessions" SELECT * FROM "sessions";',
        'DROP TABLE "sessions";',
        'ALTER TABLE "new_sessions" RENAME TO "sessions";',
        'CREATE UNIQUE INDEX "sessions_thread_id_key" ON "sessions"("thread_id");',
        'PRAGMA foreign_keys=ON;',
        'PRAGMA defer_foreign_keys=OFF;',
        '',
      ].join('\n'),
    );
    const reopened = await openSqlite(path, { migrationsDir });
    try {
      expect(await reopened.db.message.count()).toBe(1);
    } finally {
      await reopened.close();
    }
  });

  it('lets two processes migrating one new file at once both succeed, applying each migration once', async () => {
    // Real processes, not two calls in one event loop: SQLite's file locking is what is under test.
    const bundle = join(dir, 'migrate.cjs');
    await build({
      entryPoints: [join(__dirname, 'migrate.ts')],
      bundle: true,
      platform: 'node',
      format: 'cjs',
      outfile: bundle,
      external: ['better-sqlite3', 'pg'],
      nodePaths: [join(ROOT, 'node_modules')],
      tsconfig: join(ROOT, 'tsconfig.base.json'),
      logLevel: 'silent',
    });
    const path = join(dir, 'state.db');
    const script = `const { migrateSqliteFile } = require(${JSON.stringify(bundle)});
      const result = migrateSqliteFile(${JSON.stringify(path)}, { migrationsDir: ${JSON.stringify(SQLITE_MIGRATIONS)} });
      process.stdout.write(JSON.stringify(result.applied));`;
    const child = async (): Promise<string[]> =>
      JSON.parse(
        (
          await run(process.execPath, ['-e', script], {
            cwd: ROOT,
            env: { ...process.env, NODE_PATH: join(ROOT, 'node_modules') },
          })
        ).stdout,
      ) as string[];
    const results = await Promise.all([child(), child(), child()]);
    const names = readMigrations(SQLITE_MIGRATIONS).map((file) => file.name);
    expect(results.flat().sort()).toEqual(names);
    expect(rows(path).map((row) => row.migration_name)).toEqual(names);
  }, 60_000);
});
