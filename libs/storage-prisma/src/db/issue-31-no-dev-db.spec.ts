import { mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { REPO_ROOT, prismaCli } from '../testing/prisma-cli';

/**
 * Issue 31: every `npm test` left an empty `dev.db` in the repository root. The SQLite Prisma
 * config's adapter opened `file:./dev.db` (relative to the CLI's working directory) even for
 * `migrate diff --from-empty`, which reads no database; the schema specs run that command from
 * the root. The adapter now opens an in-memory database unless COGNITION_PRISMA_SQLITE_URL says
 * otherwise.
 */
let cwd: string;

beforeEach(() => {
  cwd = mkdtempSync(join(tmpdir(), 'cognition-no-dev-db-'));
});

afterEach(() => rmSync(cwd, { recursive: true, force: true }));

test('the SQLite CLI config creates no database file where it runs', async () => {
  const stdout = await prismaCli(
    [
      'migrate',
      'diff',
      '--config',
      join(REPO_ROOT, 'prisma/sqlite/prisma.config.ts'),
      '--from-empty',
      '--to-schema-datamodel',
      join(REPO_ROOT, 'prisma/sqlite/schema.prisma'),
      '--script',
    ],
    // the default database, whatever the developer's shell points the CLI at
    { COGNITION_PRISMA_SQLITE_URL: undefined },
    cwd,
  );
  expect(stdout).toContain('CREATE TABLE "sessions"');
  expect(readdirSync(cwd)).toEqual([]);
}, 60_000);
