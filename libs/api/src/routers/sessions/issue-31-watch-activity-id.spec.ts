import { describeError, toHttpError } from '../../errors';
import type { ApiTestBed } from '../../testing/test-bed';
import { createApiTestBed, trpcErrorOf } from '../../testing/test-bed';

/**
 * Issue 31, found by the route fuzz (seed 837309743): `sessions.watch` with a `lastEventId` of
 * digits beyond a 32-bit integer ("67851014962") passed the schema and failed in PostgreSQL
 * (`id > 67851014962` on an integer column): 500 STORAGE_ERROR. No activity id can be that
 * large, so it is a 422 naming the field, on every backend.
 */
describe('issue 31: sessions.watch refuses an activity id no entry can have', () => {
  let bed: ApiTestBed;
  beforeEach(async () => {
    bed = await createApiTestBed();
  });
  afterEach(async () => {
    await bed.cleanup();
  });

  it('answers 422 naming lastEventId for an id beyond 2147483647, and accepts the largest', async () => {
    const session = await bed.as().sessions.create({});
    const error = await trpcErrorOf(
      bed.as().sessions.watch({ sessionId: session.id, lastEventId: '67851014962' }),
    );
    expect(toHttpError(error).status).toBe(422);
    expect(describeError(error).issues?.[0]?.path).toBe('lastEventId');
    const largest = await bed.as().sessions.watch({
      sessionId: session.id,
      lastEventId: '2147483647',
    });
    expect(largest).toBeDefined();
  });
});
