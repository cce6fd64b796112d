import { createTestDatabase } from '@cognition/storage-prisma/testing';
import pg from 'pg';
import { describeSecretsAtRest } from '../testing/secrets-at-rest';

describeSecretsAtRest('PostgreSQL (the rows, through pg)', async () => {
  const db = await createTestDatabase('postgresql');
  if (db.provider !== 'postgresql') throw new Error('expected a Postgres test database');
  return {
    env: { COGNITION_PERSISTENCE_BACKEND: 'postgres', COGNITION_PERSISTENCE_URI: db.url },
    readRaw: async () => {
      const client = new pg.Client({ connectionString: db.url });
      await client.connect();
      try {
        const { rows } = await client.query<{ row: string }>(
          'SELECT row_to_json(r)::text AS row FROM registry_entries r',
        );
        return rows.map((r) => r.row).join('\n');
      } finally {
        await client.end();
      }
    },
    cleanup: () => db.cleanup(),
  };
});
