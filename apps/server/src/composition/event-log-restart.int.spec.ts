import { createTestDatabase } from '@cognition/storage-prisma/testing';
import { describeRestartReplay } from '../testing/event-log-restart';

describeRestartReplay('PostgreSQL', async () => {
  const db = await createTestDatabase('postgresql');
  if (db.provider !== 'postgresql') throw new Error('expected a Postgres test database');
  return {
    env: { COGNITION_PERSISTENCE_BACKEND: 'postgres', COGNITION_PERSISTENCE_URI: db.url },
    cleanup: () => db.cleanup(),
  };
});
