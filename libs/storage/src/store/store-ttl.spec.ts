import { StorageError } from '../errors';
import { expiresAtFor, ttlOfPut } from './store-ttl';

describe('store TTL helpers', () => {
  const put = (ttl: unknown) => ({ namespace: ['ns'], key: 'k', value: {}, ttl }) as never;

  it('reads a positive TTL in minutes and treats a missing one as no expiry', () => {
    expect(ttlOfPut(put(1.5))).toBe(1.5);
    expect(ttlOfPut(put(undefined))).toBeNull();
    expect(ttlOfPut(put(null))).toBeNull();
    expect(expiresAtFor(2, new Date(0))?.getTime()).toBe(120_000);
    expect(expiresAtFor(null, new Date(0))).toBeNull();
  });

  it.each([0, -1, Number.NaN, Number.POSITIVE_INFINITY, '5'])(
    'rejects ttl %p as VALIDATION_ERROR',
    (ttl) => {
      expect(() => ttlOfPut(put(ttl))).toThrow(StorageError);
      try {
        ttlOfPut(put(ttl));
      } catch (error) {
        expect((error as StorageError).code).toBe('VALIDATION_ERROR');
        expect((error as StorageError).details.issues?.[0]?.path).toBe('ttl');
      }
    },
  );
});
