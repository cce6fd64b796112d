// Prisma CLI config for the PostgreSQL schema (generate and migrate diff; migrations are applied
// by libs/storage-prisma's migrator, see ENVIRONMENT.md).
import path from 'node:path';
import { defineConfig } from 'prisma/config';
import { PrismaPg } from '@prisma/adapter-pg';

export default defineConfig({
  experimental: { adapter: true },
  engine: 'js',
  schema: path.join(__dirname, 'schema.prisma'),
  migrations: { path: path.join(__dirname, 'migrations') },
  adapter: async () =>
    new PrismaPg({
      connectionString:
        process.env['COGNITION_PRISMA_POSTGRES_URL'] ??
        'postgresql://postgres@127.0.0.1:5432/postgres',
    }),
});
