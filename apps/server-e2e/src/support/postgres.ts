import { randomBytes } from 'node:crypto';
import pg from 'pg';

const ADMIN_URL = 'postgresql://postgres@127.0.0.1:5432/postgres';

/** A fresh database for one spec file; `drop()` removes it (after the server has stopped). */
export async function createTestDatabase(): Promise<{ url: string; drop(): Promise<void> }> {
  const name = `cognition_t_${randomBytes(6).toString('hex')}`;
  const admin = new pg.Client({ connectionString: ADMIN_URL });
  await admin.connect();
  try {
    await admin.query(`CREATE DATABASE ${name}`);
  } finally {
    await admin.end();
  }
  return {
    url: `postgresql://postgres@127.0.0.1:5432/${name}`,
    async drop() {
      const client = new pg.Client({ connectionString: ADMIN_URL });
      await client.connect();
      try {
        await client.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
      } finally {
        await client.end();
      }
    },
  };
}
