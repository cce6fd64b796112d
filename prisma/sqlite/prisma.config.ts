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
  adapter: async () =>
    new PrismaBetterSQLite3({ url: process.env['COGNITION_PRISMA_SQLITE_URL'] ?? 'file:./dev.db' }),
});
