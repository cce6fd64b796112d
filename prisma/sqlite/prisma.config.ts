// Prisma CLI config for the SQLite schema. `engine: "js"` with a driver adapter keeps the CLI
// offline: no schema-engine binary is downloaded (see ENVIRONMENT.md).
import path from 'node:path';
import { defineConfig } from 'prisma/config';
import { PrismaBetterSQLite3 } from '@prisma/adapter-better-sqlite3';

export default defineConfig({
  experimental: { adapter: true },
  engine: 'js',
  schema: path.join(__dirname, 'schema.prisma'),
  migrations: { path: path.join(__dirname, 'migrations') },
  // The CLI opens this database even for commands that read none (`migrate diff --from-empty`,
  // which the storage-prisma specs run): an in-memory one by default, so no command leaves a
  // `dev.db` in the working directory (issue 31). Point a command at a file with
  // COGNITION_PRISMA_SQLITE_URL=file:/path/to/state.db.
  adapter: async () =>
    new PrismaBetterSQLite3({ url: process.env['COGNITION_PRISMA_SQLITE_URL'] ?? ':memory:' }),
});
