import { describeError, toHttpError } from '../../errors';
import type { ApiTestBed } from '../../testing/test-bed';
import { createApiTestBed, trpcErrorOf } from '../../testing/test-bed';

describe('messages.search', () => {
  let bed: ApiTestBed;

  beforeEach(async () => {
    bed = await createApiTestBed();
  });

  afterEach(async () => {
    await bed.cleanup();
  });

  it('searches the caller’s sessions only, with filters and paging', async () => {
    const alice = bed.as({ user: 'alice' });
    const mine = await alice.sessions.create({ title: 'mine' });
    const theirs = await bed.as({ user: 'bob' }).sessions.create({ title: 'theirs' });
    await bed.storage.messages.create({ sessionId: mine.id, role: 'user', content: 'blue whale' });
    await bed.storage.messages.create({
      sessionId: mine.id,
      role: 'assistant',
      content: 'The blue whale is the largest animal.',
    });
    await bed.storage.messages.create({
      sessionId: theirs.id,
      role: 'user',
      content: 'blue whale',
    });
    const page = await alice.messages.search({ q: 'Blue WHALE' });
    expect(page.total).toBe(2);
    expect(page.hits.every((hit) => hit.sessionId === mine.id && hit.sessionTitle === 'mine')).toBe(
      true,
    );
    expect((await alice.messages.search({ q: 'whale', role: 'assistant' })).total).toBe(1);
    expect((await alice.messages.search({ q: 'whale', limit: 1 })).hasMore).toBe(true);
    const hidden = await trpcErrorOf(alice.messages.search({ q: 'whale', sessionId: theirs.id }));
    expect(toHttpError(hidden).status).toBe(404);
    for (const q of ['', '   ', '!!']) {
      const error = await trpcErrorOf(alice.messages.search({ q }));
      expect(toHttpError(error).status).toBe(422);
      expect(describeError(error).issues?.map((i) => i.path)).toEqual(['q']);
    }
  });
});
