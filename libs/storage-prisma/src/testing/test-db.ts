import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import type { DatabaseProvider } from '../db/migrate';

/** Where tests reach a Postgres server allowed to create databases (trust auth on CI). */
export const DEFAULT_TEST_POSTGRES_URL = 'postgresql://postgres@127.0.0.1:5432/postgres';

export type TestDatabase =
  | { provider: 'sqlite'; path: string; cleanup(): Promise<void> }
  | { provider: 'postgresql'; url: string; name: string; cleanup(): Promise<void> };

/**
 * A fresh, empty database for one spec file (or one test): a SQLite file in a new temp dir, or a
 * new Postgres database `cognition_t_<random>` on the server of `adminUrl` (default: env
 * `COGNITION_TEST_POSTGRES_URL`, else {@link DEFAULT_TEST_POSTGRES_URL}). Nothing is migrated:
 * opening it does that. `cleanup()` removes the temp dir or drops the database (terminating
 * connections still open), so parallel jest workers and helpers never collide or leak.
 */
export async function createTestDatabase(
  provider: DatabaseProvider,
  options: { adminUrl?: string } = {},
): Promise<TestDatabase> {
  switch (provider) {
    case 'sqlite': {
      const dir = mkdtempSync(join(tmpdir(), 'cognition-sqlite-'));
      return {
        provider,
        path: join(dir, 'state.db'),
        cleanup: () => Promise.resolve(rmSync(dir, { recursive: true, force: true })),
      };
    }
    case 'postgresql': {
      const adminUrl =
        options.adminUrl ?? process.env['COGNITION_TEST_POSTGRES_URL'] ?? DEFAULT_TEST_POSTGRES_URL;
      const name = `cognition_t_${randomBytes(6).toString('hex')}`;
      await withAdmin(adminUrl, (admin) => admin.query(`CREATE DATABASE ${name}`));
      const url = new URL(adminUrl);
      url.pathname = `/${name}`;
      return {
        provider,
        name,
        url: url.toString(),
        cleanup: () =>
          withAdmin(adminUrl, (admin) =>
            admin.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`),
          ),
      };
    }
  }
}

async function withAdmin(
  adminUrl: string,
  fn: (client: pg.Client) => Promise<unknown>,
): Promise<void> {
  const admin = new pg.Client({ connectionString: adminUrl, connectionTimeoutMillis: 5000 });
  try {
    await admin.connect();
  } catch (error) {
    throw new Error(
      `postgres: UNAVAILABLE — the tests need a PostgreSQL server at ${redactPassword(adminUrl)} ` +
        `(${error instanceof Error ? error.message : String(error)}). \`npm test\` provisions one ` +
        `(tools/provision/ensure-postgres.mjs); to use another server set COGNITION_TEST_POSTGRES_URL.`,
      { cause: error },
    );
  }
  try {
    await fn(admin);
  } finally {
    await admin.end();
  }
}

function redactPassword(url: string): string {
  return url.replace(/\/\/([^:/@]+):[^@]*@/, '//$1:***@');
}
