import { StorageError } from '@cognition/storage';
import { createSqliteHandle } from './db';
import { requireRawConnection } from './raw-connections';

describe('requireRawConnection (issue 27: per-turn statements on the driver)', () => {
  it('gives the driver under a client made by this library', async () => {
    const handle = createSqliteHandle(':memory:');
    try {
      expect(requireRawConnection(handle.db, 'The run store').provider).toBe('sqlite');
    } finally {
      await handle.close();
    }
  });

  it('refuses a client made elsewhere with a STORAGE_ERROR naming the store', () => {
    const foreign = {};
    expect(() => requireRawConnection(foreign, 'The run store')).toThrow(StorageError);
    expect(() => requireRawConnection(foreign, 'The run store')).toThrow(/^The run store needs/);
  });
});
