import { createHash, randomUUID } from 'node:crypto';
import { existsSync, mkdirSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { StorageError } from '@cognition/storage';
import Sqlite from 'better-sqlite3';
import type pg from 'pg';
import { guardPoolErrors } from './pool-errors';

/** The two database providers, named as Prisma names them. */
export type DatabaseProvider = 'sqlite' | 'postgresql';

/** One committed migration folder: `<migrationsDir>/<timestamp>_<name>/migration.sql`. */
export interface MigrationFile {
  name: string;
  sql: string;
  /** sha256 (hex) of the file's bytes, exactly as Prisma computes it. */
  checksum: string;
}

export interface MigrateResult {
  /** Migrations applied by this call, in order. */
  applied: string[];
  /** Migrations that were already recorded as applied. */
  alreadyApplied: string[];
  /**
   * Migrations recorded in the database but absent from the folder (a newer build migrated the
   * database). Tolerated, so an older node can still start during a rolling deploy.
   */
  unknown: string[];
}

export interface MigrateOptions {
  /**
   * Folder holding the provider's migration folders. Default: the first
   * `prisma/<sqlite|postgres>/migrations` found walking up from this module's directory, then
   * from the working directory (works from the sources, from jest and from a built server
   * started anywhere inside the repository or its deployment copy).
   */
  migrationsDir?: string;
}

export type MigrateConfig =
  | ({ provider: 'sqlite'; path: string } & MigrateOptions)
  | ({ provider: 'postgresql'; url: string } & MigrateOptions);

/** Folder name under `prisma/` per provider. */
const PROVIDER_FOLDER: Record<DatabaseProvider, string> = {
  sqlite: 'sqlite',
  postgresql: 'postgres',
};

/**
 * Key of the session-level advisory lock that serializes migrators on one Postgres database
 * (an arbitrary constant; "cognmigr" as ASCII bytes).
 */
const MIGRATION_ADVISORY_LOCK_KEY = 7165064107434848882n;

/** Finds the default migrations folder of `provider` (see {@link MigrateOptions.migrationsDir}). */
export function defaultMigrationsDir(provider: DatabaseProvider): string {
  const relative = join('prisma', PROVIDER_FOLDER[provider], 'migrations');
  for (const start of [__dirname, process.cwd()]) {
    let dir = resolve(start);
    for (;;) {
      const candidate = join(dir, relative);
      if (existsSync(candidate)) return candidate;
      const parent = dirname(dir);
      if (parent === dir) break;
      dir = parent;
    }
  }
  throw new StorageError(
    'STORAGE_ERROR',
    `No ${relative} folder found above ${__dirname} or ${process.cwd()}; pass migrationsDir`,
  );
}

/** Reads the committed migrations of a folder, ordered by folder name (timestamp first). */
export function readMigrations(migrationsDir: string): MigrationFile[] {
  if (!existsSync(migrationsDir)) {
    throw new StorageError('STORAGE_ERROR', `Migrations folder not found: ${migrationsDir}`);
  }
  return readdirSync(migrationsDir)
    .filter((name) => {
      const file = join(migrationsDir, name, 'migration.sql');
      return statSync(join(migrationsDir, name)).isDirectory() && existsSync(file);
    })
    .sort()
    .map((name) => {
      const bytes = readFileSync(join(migrationsDir, name, 'migration.sql'));
      return {
        name,
        sql: bytes.toString('utf8'),
        checksum: createHash('sha256').update(bytes).digest('hex'),
      };
    });
}

interface AppliedRow {
  migration_name: string;
  checksum: string;
  finished_at: unknown;
  rolled_back_at: unknown;
}

/**
 * Checks the recorded migrations against the files: a changed checksum or a failed migration
 * (started, never finished, not rolled back) stops everything, as `prisma migrate deploy` does.
 */
function plan(
  files: MigrationFile[],
  rows: AppliedRow[],
): { pending: MigrationFile[]; result: MigrateResult } {
  const live = rows.filter((row) => row.rolled_back_at === null);
  const failed = live.find((row) => row.finished_at === null);
  if (failed) {
    throw new StorageError(
      'STORAGE_ERROR',
      `Migration ${failed.migration_name} failed earlier and was never finished or rolled back; ` +
        `repair the database and mark it rolled back before migrating again`,
    );
  }
  const byName = new Map(live.map((row) => [row.migration_name, row]));
  for (const file of files) {
    const row = byName.get(file.name);
    if (row && row.checksum !== file.checksum) {
      throw new StorageError(
        'STORAGE_ERROR',
        `Migration ${file.name} was modified after it was applied (recorded checksum ${row.checksum}, ` +
          `file checksum ${file.checksum}). Never edit a committed migration: restore it and add a new one`,
      );
    }
  }
  const names = new Set(files.map((file) => file.name));
  return {
    pending: files.filter((file) => !byName.has(file.name)),
    result: {
      applied: [],
      alreadyApplied: files.filter((file) => byName.has(file.name)).map((file) => file.name),
      unknown: [...byName.keys()].filter((name) => !names.has(name)),
    },
  };
}

/** Prisma's own `_prisma_migrations` definition per provider (same columns and types). */
const MIGRATIONS_TABLE: Record<DatabaseProvider, string> = {
  sqlite: `CREATE TABLE IF NOT EXISTS "_prisma_migrations" (
    "id"                    TEXT PRIMARY KEY NOT NULL,
    "checksum"              TEXT NOT NULL,
    "finished_at"           DATETIME,
    "migration_name"        TEXT NOT NULL,
    "logs"                  TEXT,
    "rolled_back_at"        DATETIME,
    "started_at"            DATETIME NOT NULL DEFAULT current_timestamp,
    "applied_steps_count"   INTEGER UNSIGNED NOT NULL DEFAULT 0
)`,
  postgresql: `CREATE TABLE IF NOT EXISTS "_prisma_migrations" (
    "id"                    VARCHAR(36) PRIMARY KEY NOT NULL,
    "checksum"              VARCHAR(64) NOT NULL,
    "finished_at"           TIMESTAMPTZ,
    "migration_name"        VARCHAR(255) NOT NULL,
    "logs"                  TEXT,
    "rolled_back_at"        TIMESTAMPTZ,
    "started_at"            TIMESTAMPTZ NOT NULL DEFAULT now(),
    "applied_steps_count"   INTEGER NOT NULL DEFAULT 0
)`,
};

const SELECT_APPLIED =
  'SELECT migration_name, checksum, finished_at, rolled_back_at FROM "_prisma_migrations" ORDER BY started_at';

/** Timestamps in the text form Prisma's SQLite adapter writes (`...T..:..:..+00:00`). */
function sqliteTimestamp(date: Date): string {
  return date.toISOString().replace('Z', '+00:00');
}

/**
 * Applies the pending migrations of a SQLite database file through its own connection.
 * Foreign keys are off on this connection (SQLite ignores that pragma inside a transaction, and
 * Prisma's table-redefinition scripts would otherwise cascade-delete child rows when they drop
 * and recreate a parent table); `foreign_key_check` runs before each commit instead.
 * `BEGIN IMMEDIATE` takes the write lock up front, and the migration is re-checked under it, so
 * two processes opening one file at once apply it exactly once.
 */
export function migrateSqliteFile(path: string, options: MigrateOptions = {}): MigrateResult {
  const files = readMigrations(options.migrationsDir ?? defaultMigrationsDir('sqlite'));
  mkdirSync(dirname(resolve(path)), { recursive: true });
  const db = new Sqlite(path, { timeout: 10_000 });
  try {
    db.pragma('journal_mode = WAL');
    db.pragma('foreign_keys = OFF');
    db.exec(MIGRATIONS_TABLE.sqlite);
    const { pending, result } = plan(files, db.prepare(SELECT_APPLIED).all() as AppliedRow[]);
    const recorded = db.prepare(
      'SELECT 1 FROM "_prisma_migrations" WHERE migration_name = ? AND rolled_back_at IS NULL',
    );
    const insert = db.prepare(
      'INSERT INTO "_prisma_migrations" (id, checksum, finished_at, migration_name, logs, rolled_back_at, started_at, applied_steps_count) VALUES (?, ?, ?, ?, NULL, NULL, ?, 1)',
    );
    for (const file of pending) {
      db.exec('BEGIN IMMEDIATE');
      try {
        if (recorded.get(file.name) === undefined) {
          const startedAt = sqliteTimestamp(new Date());
          db.exec(file.sql);
          const violations = db.pragma('foreign_key_check') as unknown[];
          if (violations.length > 0) {
            throw new StorageError(
              'STORAGE_ERROR',
              `Migration ${file.name} leaves ${violations.length} foreign key violation(s)`,
            );
          }
          insert.run(
            randomUUID(),
            file.checksum,
            sqliteTimestamp(new Date()),
            file.name,
            startedAt,
          );
          result.applied.push(file.name);
        } else {
          result.alreadyApplied.push(file.name);
        }
        db.exec('COMMIT');
      } catch (error) {
        db.exec('ROLLBACK');
        throw migrationFailure(file.name, error);
      }
    }
    return result;
  } finally {
    db.close();
  }
}

/**
 * Applies the pending migrations of a Postgres database. A session-level advisory lock on one
 * pooled connection serializes concurrent migrators (two nodes starting at once): the second
 * waits, then finds everything recorded and applies nothing. Each migration runs in its own
 * transaction together with its `_prisma_migrations` row, so it is applied whole or not at all.
 */
export async function migratePostgresPool(
  pool: pg.Pool,
  options: MigrateOptions = {},
): Promise<MigrateResult> {
  const files = readMigrations(options.migrationsDir ?? defaultMigrationsDir('postgresql'));
  const client = await pool.connect();
  let locked = false;
  try {
    await client.query('SELECT pg_advisory_lock($1)', [MIGRATION_ADVISORY_LOCK_KEY.toString()]);
    locked = true;
    await client.query(MIGRATIONS_TABLE.postgresql);
    const applied = await client.query<AppliedRow>(SELECT_APPLIED);
    const { pending, result } = plan(files, applied.rows);
    for (const file of pending) {
      await client.query('BEGIN');
      try {
        const startedAt = new Date();
        await client.query(file.sql);
        await client.query(
          'INSERT INTO "_prisma_migrations" (id, checksum, finished_at, migration_name, logs, rolled_back_at, started_at, applied_steps_count) VALUES ($1, $2, now(), $3, NULL, NULL, $4, 1)',
          [randomUUID(), file.checksum, file.name, startedAt],
        );
        await client.query('COMMIT');
        result.applied.push(file.name);
      } catch (error) {
        await client.query('ROLLBACK');
        throw migrationFailure(file.name, error);
      }
    }
    return result;
  } finally {
    if (locked) {
      await client
        .query('SELECT pg_advisory_unlock($1)', [MIGRATION_ADVISORY_LOCK_KEY.toString()])
        .catch(() => undefined);
    }
    client.release();
  }
}

function migrationFailure(name: string, error: unknown): StorageError {
  if (error instanceof StorageError) return error;
  const reason = error instanceof Error ? error.message : String(error);
  return new StorageError(
    'STORAGE_ERROR',
    `Migration ${name} failed and was rolled back: ${reason}`,
    {
      cause: error,
    },
  );
}

/**
 * Applies the committed migrations of the configured database (the `cognition migrate` command).
 * Idempotent; safe to run while servers are starting (see the per-provider functions).
 */
export async function migrate(config: MigrateConfig): Promise<MigrateResult> {
  switch (config.provider) {
    case 'sqlite':
      return migrateSqliteFile(config.path, config);
    case 'postgresql': {
      // Loaded here, not at the top: a SQLite process never loads the PostgreSQL driver.
      const { default: pgDriver } = await import('pg');
      const pool = new pgDriver.Pool({ connectionString: config.url, max: 1 });
      guardPoolErrors(pool);
      try {
        return await migratePostgresPool(pool, config);
      } catch (error) {
        throw error instanceof StorageError
          ? error
          : new StorageError(
              'UNAVAILABLE',
              `Cannot migrate ${redactUrl(config.url)}: ${String(error)}`,
              {
                cause: error,
              },
            );
      } finally {
        await pool.end();
      }
    }
  }
}

/** A connection URL with its password masked, for error messages. */
export function redactUrl(url: string): string {
  try {
    const parsed = new URL(url);
    if (parsed.password) parsed.password = '***';
    return parsed.toString();
  } catch {
    return '(invalid url)';
  }
}
