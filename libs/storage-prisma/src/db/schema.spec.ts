import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Sqlite from 'better-sqlite3';
import { SEARCH_OBJECTS } from '../analytics/search-objects';
import { migrate } from './migrate';
import { modelScript, REPO_ROOT as ROOT, runFile as run } from '../testing/prisma-cli';

/** Tables, columns, indexes and foreign keys of a SQLite file, in a comparable form. */
function sqliteCatalog(path: string): unknown {
  const db = new Sqlite(path, { readonly: true });
  try {
    const tables = (
      db
        .prepare(
          "SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%' AND name <> '_prisma_migrations' ORDER BY name",
        )
        .all() as { name: string }[]
    )
      .map((row) => row.name)
      // Message search (FTS5) is checked apart: the model cannot express it.
      .filter((name) => !name.startsWith(SEARCH_OBJECTS.sqlite.tablePrefix));
    return tables.map((table) => ({
      table,
      columns: db.pragma(`table_xinfo("${table}")`),
      indexes: (
        db.pragma(`index_list("${table}")`) as { name: string; unique: number; origin: string }[]
      )
        .map((index) => ({
          ...index,
          seq: undefined,
          columns: db.pragma(`index_info("${index.name}")`),
        }))
        .sort((a, b) => a.name.localeCompare(b.name)),
      foreignKeys: db.pragma(`foreign_key_list("${table}")`),
    }));
  } finally {
    db.close();
  }
}

describe('schema sources', () => {
  it('prisma/<provider>/schema.prisma are current with prisma/model.prisma', async () => {
    await expect(
      run(process.execPath, [join(ROOT, 'tools/prisma/compose-schema.mjs'), '--check'], {
        cwd: ROOT,
      }),
    ).resolves.toBeDefined();
  });

  it('the committed SQLite migrations build exactly the schema of the model', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'cognition-schema-'));
    try {
      const migrated = join(dir, 'migrated.db');
      await migrate({ provider: 'sqlite', path: migrated });
      const fromModel = join(dir, 'model.db');
      const db = new Sqlite(fromModel);
      db.exec(await modelScript('sqlite'));
      db.close();
      const want = sqliteCatalog(fromModel);
      expect((want as unknown[]).length).toBeGreaterThanOrEqual(8);
      expect(sqliteCatalog(migrated)).toEqual(want);
      const db2 = new Sqlite(migrated, { readonly: true });
      try {
        const objects = (type: string) =>
          (
            db2
              .prepare(
                `SELECT name FROM sqlite_master WHERE type = ? AND name LIKE '%search%' ORDER BY name`,
              )
              .all(type) as { name: string }[]
          ).map((row) => row.name);
        expect(objects('trigger')).toEqual(SEARCH_OBJECTS.sqlite.triggers);
        expect(objects('table')).toEqual(expect.arrayContaining([...SEARCH_OBJECTS.sqlite.tables]));
      } finally {
        db2.close();
      }
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  }, 60_000);
});
