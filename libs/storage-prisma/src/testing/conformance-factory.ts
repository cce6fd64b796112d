import { copyFileSync } from 'node:fs';
import type { ProjectionTamper, StorageHarnessFactory } from '@cognition/storage/testing';
import Sqlite from 'better-sqlite3';
import pg from 'pg';
import type { DatabaseProvider } from '../db/migrate';
import { migrateSqliteFile } from '../db/migrate';
import { createPrismaStorage } from '../prisma-storage';
import type { TestDatabase } from './test-db';
import { createTestDatabase } from './test-db';

/** Every table the backend writes, children first (the migrations table is kept). */
const DATA_TABLES = [
  'session_activity',
  'messages',
  'callback_attempts',
  'runs',
  'session_scopes',
  'session_metadata',
  'sessions',
  'checkpoint_writes',
  'checkpoints',
  'store_vectors',
  'store_items',
  'artifact_versions',
  'artifact_scopes',
  'artifact_metadata',
  'artifacts',
  'registry_entries',
  'schedule_fires',
  'schedules',
];

interface SqlRunner {
  exec(sql: string, params: unknown[]): Promise<void>;
  close(): Promise<void>;
}

/**
 * Plain SQL on a connection of its own: tampering must bypass the backend entirely, the way a
 * crash between two writes or a manual edit would.
 */
async function sqlRunner(database: TestDatabase): Promise<SqlRunner> {
  if (database.provider === 'sqlite') {
    const db = new Sqlite(database.path, { timeout: 10_000 });
    return {
      exec: (sql, params) => {
        db.prepare(sql.replace(/\$\d+/g, '?')).run(...params);
        return Promise.resolve();
      },
      close: () => {
        db.close();
        return Promise.resolve();
      },
    };
  }
  const client = new pg.Client({ connectionString: database.url });
  await client.connect();
  return {
    exec: async (sql, params) => {
      await client.query(sql, params);
    },
    close: () => client.end(),
  };
}

function tamperWith(runner: SqlRunner): ProjectionTamper {
  return {
    deleteMessageRow: (sessionId, messageId) =>
      runner.exec('DELETE FROM messages WHERE session_id = $1 AND id = $2', [sessionId, messageId]),
    setMessageContent: (sessionId, messageId, content) =>
      runner.exec('UPDATE messages SET content = $1 WHERE session_id = $2 AND id = $3', [
        content,
        sessionId,
        messageId,
      ]),
    setProjectedCheckpointId: (sessionId, checkpointId) =>
      runner.exec('UPDATE sessions SET projected_checkpoint_id = $1 WHERE id = $2', [
        checkpointId,
        sessionId,
      ]),
  };
}

/** A SQLite file with every migration applied, copied for each test of a spec file. */
async function migratedSqliteTemplate(): Promise<{ path: string; cleanup(): Promise<void> }> {
  const template = await createTestDatabase('sqlite');
  if (template.provider !== 'sqlite') throw new Error('a SQLite database was asked for');
  migrateSqliteFile(template.path);
  return template;
}

/**
 * The conformance suite's factory for one provider, plus the `afterAll` teardown.
 * SQLite: a fresh database file per test, a copy of one migrated per spec file (migrating a new
 * file was two thirds of a test's set-up: 62 -> 19 ms of CPU; `initialize()` still runs the
 * migrator, which finds every migration applied). Postgres: one fresh database per spec file
 * (creating a database per test would dominate the run time), every data table emptied before
 * each test.
 */
export function prismaConformanceFactory(
  provider: DatabaseProvider,
  options: { poolSize?: number } = {},
): { factory: StorageHarnessFactory; teardown(): Promise<void> } {
  let shared: TestDatabase | undefined;
  let template: { path: string; cleanup(): Promise<void> } | undefined;
  const factory: StorageHarnessFactory = async () => {
    let database: TestDatabase;
    if (provider === 'sqlite') {
      template ??= await migratedSqliteTemplate();
      database = await createTestDatabase('sqlite');
      // Closed after migrating, so the file holds everything (no write-ahead log beside it).
      if (database.provider === 'sqlite') copyFileSync(template.path, database.path);
    } else {
      shared ??= await createTestDatabase('postgresql');
      database = shared;
    }
    const runner = await sqlRunner(database);
    if (database.provider === 'postgresql') {
      // DELETE, not TRUNCATE: on a few rows it is ten times faster (TRUNCATE swaps files).
      // Before the first initialize() the tables do not exist yet; nothing to wipe then.
      await runner.exec(
        `DO $$ BEGIN IF to_regclass('public.sessions') IS NOT NULL THEN ${DATA_TABLES.map((t) => `DELETE FROM ${t};`).join(' ')} END IF; END $$`,
        [],
      );
    }
    const backend =
      database.provider === 'sqlite'
        ? createPrismaStorage({ provider: 'sqlite', path: database.path })
        : createPrismaStorage({
            provider: 'postgresql',
            url: database.url,
            poolSize: options.poolSize ?? 4,
          });
    return {
      backend,
      tamper: tamperWith(runner),
      cleanup: async () => {
        await backend.close();
        await runner.close();
        if (database.provider === 'sqlite') await database.cleanup();
      },
    };
  };
  return {
    factory,
    teardown: async () => {
      await template?.cleanup();
      await shared?.cleanup();
    },
  };
}
