import { createHash } from 'node:crypto';
import {
  appendFileSync,
  cpSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  rmSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { StorageError } from '@cognition/storage';
import pg from 'pg';
import { openPostgres } from './db';
import { SEARCH_OBJECTS } from '../analytics/search-objects';
import { migrate, readMigrations } from './migrate';
import type { TestDatabase } from '../testing/test-db';
import { createTestDatabase } from '../testing/test-db';
import { modelScript, REPO_ROOT } from '../testing/prisma-cli';

const MIGRATIONS = join(REPO_ROOT, 'prisma/postgres/migrations');

let databases: TestDatabase[] = [];
let dir: string;

async function freshDatabase(): Promise<string> {
  const database = await createTestDatabase('postgresql');
  databases.push(database);
  if (database.provider !== 'postgresql') throw new Error('postgres expected');
  return database.url;
}

async function query<T extends pg.QueryResultRow>(url: string, sql: string): Promise<T[]> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    return (await client.query<T>(sql)).rows;
  } finally {
    await client.end();
  }
}

/** Columns, indexes and constraints of the public schema, in a comparable form. */
/**
 * The public schema's tables, indexes and constraints, without Prisma's bookkeeping table. Since
 * PostgreSQL 18, NOT NULL constraints are rows of pg_constraint too (`<table>_<col>_not_null`), so
 * the bookkeeping table is left out by its name, not by its primary key's.
 */
async function catalog(url: string): Promise<unknown> {
  const [columns, indexes, constraints] = await Promise.all([
    query(
      url,
      `SELECT table_name, column_name, data_type, is_nullable, column_default, character_maximum_length, datetime_precision
       FROM information_schema.columns WHERE table_schema = 'public' AND table_name <> '_prisma_migrations'
       ORDER BY table_name, column_name`,
    ),
    query(
      url,
      `SELECT tablename, indexname, indexdef FROM pg_indexes
       WHERE schemaname = 'public' AND tablename <> '_prisma_migrations' ORDER BY indexname`,
    ),
    query(
      url,
      `SELECT conrelid::regclass::text AS table_name, conname, pg_get_constraintdef(oid) AS def FROM pg_constraint
       WHERE connamespace = 'public'::regnamespace AND conrelid::regclass::text <> '_prisma_migrations'
       ORDER BY conname`,
    ),
  ]);
  return { columns, indexes, constraints };
}

beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'cognition-pg-migrate-'));
});
afterEach(async () => {
  rmSync(dir, { recursive: true, force: true });
  for (const database of databases) await database.cleanup();
  databases = [];
});

describe('migrator (PostgreSQL)', () => {
  it('lets two processes opening one fresh database at once both succeed, recording each migration once', async () => {
    const url = await freshDatabase();
    const [a, b] = await Promise.all([
      openPostgres(url, { poolSize: 2 }),
      openPostgres(url, { poolSize: 2 }),
    ]);
    const committed = readMigrations(MIGRATIONS);
    const names = committed.map((file) => file.name);
    try {
      expect([...a.migrations.applied, ...b.migrations.applied].sort()).toEqual(names);
      expect(await a.db.session.count()).toBe(0);
    } finally {
      await a.close();
      await b.close();
    }
    const rows = await query<{
      migration_name: string;
      checksum: string;
      finished_at: Date | null;
      applied_steps_count: number;
    }>(
      url,
      'SELECT migration_name, checksum, finished_at, applied_steps_count FROM _prisma_migrations ORDER BY migration_name',
    );
    expect(rows).toEqual(
      committed.map((file) => ({
        migration_name: file.name,
        checksum: file.checksum,
        finished_at: expect.any(Date) as Date,
        applied_steps_count: 1,
      })),
    );
    expect(committed[0]?.checksum).toBe(
      createHash('sha256')
        .update(readFileSync(join(MIGRATIONS, '20261122000000_init', 'migration.sql')))
        .digest('hex'),
    );
    expect(await migrate({ provider: 'postgresql', url })).toEqual({
      applied: [],
      alreadyApplied: names,
      unknown: [],
    });
  });

  it("creates _prisma_migrations with Prisma's own column types", async () => {
    const url = await freshDatabase();
    await migrate({ provider: 'postgresql', url });
    const columns = await query<{ column_name: string; data_type: string; is_nullable: string }>(
      url,
      `SELECT column_name, data_type, is_nullable FROM information_schema.columns
       WHERE table_name = '_prisma_migrations' ORDER BY ordinal_position`,
    );
    expect(columns.map((c) => `${c.column_name} ${c.data_type} ${c.is_nullable}`)).toEqual([
      'id character varying NO',
      'checksum character varying NO',
      'finished_at timestamp with time zone YES',
      'migration_name character varying NO',
      'logs text YES',
      'rolled_back_at timestamp with time zone YES',
      'started_at timestamp with time zone NO',
      'applied_steps_count integer NO',
    ]);
  });

  it('refuses an edited migration and rolls a failing one back whole', async () => {
    const url = await freshDatabase();
    const migrationsDir = join(dir, 'migrations');
    cpSync(MIGRATIONS, migrationsDir, { recursive: true });
    await migrate({ provider: 'postgresql', url, migrationsDir });

    mkdirSync(join(migrationsDir, '20990101000000_broken'));
    writeFileSync(
      join(migrationsDir, '20990101000000_broken', 'migration.sql'),
      'CREATE TABLE "half" ("id" TEXT);\nINSERT INTO "no_such_table" VALUES (1);\n',
    );
    await expect(migrate({ provider: 'postgresql', url, migrationsDir })).rejects.toThrow(
      /20990101000000_broken failed and was rolled back/,
    );
    expect(await query(url, "SELECT to_regclass('public.half') AS t")).toEqual([{ t: null }]);
    rmSync(join(migrationsDir, '20990101000000_broken'), { recursive: true });

    appendFileSync(join(migrationsDir, '20261122000000_init', 'migration.sql'), '\n-- edited\n');
    const error: unknown = await migrate({ provider: 'postgresql', url, migrationsDir }).catch(
      (e: unknown) => e,
    );
    expect(error).toBeInstanceOf(StorageError);
    expect((error as StorageError).code).toBe('STORAGE_ERROR');
    expect((error as StorageError).message).toMatch(
      /20261122000000_init was modified after it was applied/,
    );
  });

  it('reports an unreachable server as UNAVAILABLE without leaking the password', async () => {
    const error: unknown = await openPostgres(
      'postgresql://postgres:secret@127.0.0.1:1/none',
    ).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(StorageError);
    expect((error as StorageError).code).toBe('UNAVAILABLE');
    expect((error as StorageError).message).not.toContain('secret');
  });

  it('the committed migrations build exactly the schema of the model', async () => {
    const [migrated, fromModel] = [await freshDatabase(), await freshDatabase()];
    await migrate({ provider: 'postgresql', url: migrated });
    await query(fromModel, await modelScript('postgresql'));
    const want = (await catalog(fromModel)) as { columns: unknown[] };
    expect(want.columns.length).toBeGreaterThan(50);
    // Message search's GIN expression index is checked apart: the model cannot express it.
    const got = (await catalog(migrated)) as { indexes: { indexname: string; indexdef: string }[] };
    const search = got.indexes.filter((i) =>
      (SEARCH_OBJECTS.postgresql.indexes as readonly string[]).includes(i.indexname),
    );
    expect(search.map((i) => i.indexname)).toEqual([...SEARCH_OBJECTS.postgresql.indexes]);
    expect(search[0]?.indexdef).toContain('USING gin (to_tsvector');
    expect({ ...got, indexes: got.indexes.filter((i) => !search.includes(i)) }).toEqual(want);
  }, 60_000);
});
