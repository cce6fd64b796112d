import { readdirSync, readFileSync, statSync } from 'node:fs';
import path from 'node:path';
import { createTestDatabase } from '@cognition/storage-prisma/testing';
import { describeSecretsAtRest, PROVIDER, SecretsServerHarness } from '../testing/secrets-at-rest';

/** Every byte of the SQLite database (main file, WAL and shared memory), read around the server. */
function sqliteBytes(file: string): string {
  const dir = path.dirname(file);
  return readdirSync(dir)
    .filter((name) => name.startsWith(path.basename(file)))
    .map((name) => readFileSync(path.join(dir, name)).toString('latin1'))
    .join('\n');
}

async function sqlite() {
  const db = await createTestDatabase('sqlite');
  if (db.provider !== 'sqlite') throw new Error('expected a SQLite test database');
  return {
    env: { COGNITION_PERSISTENCE_BACKEND: 'sqlite', COGNITION_PERSISTENCE_URI: db.path },
    readRaw: () => Promise.resolve(sqliteBytes(db.path)),
    cleanup: () => db.cleanup(),
  };
}

describeSecretsAtRest("SQLite (the file's bytes)", sqlite);

describe('the development key (issue 31)', () => {
  it('is created 0600 in the state directory, said at start-up, and reused', async () => {
    const db = await sqlite();
    const harness = new SecretsServerHarness(db.env);
    try {
      await harness.start();
      const file = path.join(harness.workspace, '.cognition', 'secrets.key');
      expect(statSync(file).mode & 0o777).toBe(0o600);
      expect(harness.logs.join('')).toContain(`created a development key at ${file} (mode 0600`);
      expect((await harness.request('POST', '/providers', PROVIDER)).status).toBe(201);
      await harness.stop();
      const before = readFileSync(file, 'utf8');
      await harness.start();
      expect(readFileSync(file, 'utf8')).toBe(before);
      expect(harness.logs.join('')).toContain(`using the development key at ${file}`);
      expect((await harness.request('GET', '/providers/vllm')).text).toContain(
        '"api_key_set":true',
      );
      await harness.cleanup(false);
    } catch (error) {
      await harness.cleanup(true);
      throw error;
    } finally {
      await db.cleanup();
    }
  });
});
