import { openSqlite } from '../db';
import { createTestDatabase } from '../testing-db';
test('x', async () => {
  const t = await createTestDatabase('sqlite');
  if (t.provider !== 'sqlite') throw new Error();
  const o = await openSqlite(t.path);
  const db: any = o.db;
  console.log(
    db._activeProvider,
    db._engineConfig?.activeProvider,
    Object.keys(db).slice(0, 40),
    db._engineConfig?.adapter?.provider,
  );
  await o.close();
  await t.cleanup();
});
