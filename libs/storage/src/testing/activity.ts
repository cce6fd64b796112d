import type { NewSessionActivity } from '@cognition/contracts';
import type { SuiteContext } from './context';
import { expectStorageError, uid } from './helpers';

/** The value, failing the test when it is null or undefined. */
function must<T>(value: T | null | undefined): T {
  if (value === null || value === undefined) throw new Error('expected a value');
  return value;
}

function activity(sessionId: string, type: NewSessionActivity['type']): NewSessionActivity {
  return {
    sessionId,
    type,
    action: 'suspend',
    versionBefore: 1,
    versionAfter: 2,
    statusBefore: 'active',
    statusAfter: 'suspended',
    errorCode: null,
    detail: { by: 'conformance' },
  };
}

/** The session activity log: append, pages, the watch replay, scope and cascade. */
export function activityTests(ctx: SuiteContext): void {
  describe('session activity log', () => {
    it('appends entries with increasing ids, pages them newest first and scopes them', async () => {
      const session = await ctx.backend.sessions.create({}, { user: 'alice' });
      const other = await ctx.backend.sessions.create({}, { user: 'bob' });
      const first = await ctx.backend.activity.append(activity(session.id, 'session.loaded'));
      const second = await ctx.backend.activity.append(
        activity(session.id, 'session.action_executed'),
      );
      const third = await ctx.backend.activity.append(activity(other.id, 'session.saved'));
      expect(first).toMatchObject({
        ...activity(session.id, 'session.loaded'),
        id: expect.any(Number) as number,
      });
      expect(first?.createdAt).toBeInstanceOf(Date);
      expect(must(second).id).toBeGreaterThan(must(first).id);
      expect(must(third).id).toBeGreaterThan(must(second).id);
      const page = await ctx.backend.activity.page(session.id, { limit: 1 }, { user: 'alice' });
      expect(page.total).toBe(2);
      expect(page.hasMore).toBe(true);
      expect(page.entries.map((e) => e.id)).toEqual([must(second).id]);
      const rest = await ctx.backend.activity.page(session.id, { limit: 1, offset: 1 }, {});
      expect(rest.entries.map((e) => e.id)).toEqual([must(first).id]);
      expect(rest.hasMore).toBe(false);
      await expectStorageError(
        ctx.backend.activity.page(session.id, {}, { user: 'bob' }),
        'SESSION_NOT_FOUND',
      );
      // Replay: oldest first after an id, only what the scope sees, optionally one session.
      expect((await ctx.backend.activity.listAfter(0, 10, {})).map((e) => e.id)).toEqual([
        must(first).id,
        must(second).id,
        must(third).id,
      ]);
      expect(
        (await ctx.backend.activity.listAfter(must(first).id, 10, { user: 'alice' })).map(
          (e) => e.id,
        ),
      ).toEqual([must(second).id]);
      expect((await ctx.backend.activity.listAfter(0, 10, {}, other.id)).map((e) => e.id)).toEqual([
        must(third).id,
      ]);
      expect((await ctx.backend.activity.listAfter(0, 1, {})).length).toBe(1);
    });

    it('appends several entries in one write, in order, with increasing ids', async () => {
      const session = await ctx.backend.sessions.create({}, {});
      const stored = await ctx.backend.activity.appendMany([
        activity(session.id, 'session.loaded'),
        activity(session.id, 'session.action_executed'),
        activity(session.id, 'session.saved'),
      ]);
      expect(stored.map((e) => e.type)).toEqual([
        'session.loaded',
        'session.action_executed',
        'session.saved',
      ]);
      const ids = stored.map((e) => e.id);
      expect([...ids].sort((a, b) => a - b)).toEqual(ids);
      expect(new Set(ids).size).toBe(3);
      const page = await ctx.backend.activity.page(session.id, {}, {});
      expect(page.entries.map((e) => e.id)).toEqual([...ids].reverse());
      expect(await ctx.backend.activity.appendMany([])).toEqual([]);
      expect(
        await ctx.backend.activity.appendMany([activity(uid('missing'), 'session.saved')]),
      ).toEqual([]);
    });

    it('drops entries of a missing session and deletes a session’s entries with it', async () => {
      expect(
        await ctx.backend.activity.append(activity(uid('missing'), 'session.load_failed')),
      ).toBeNull();
      const session = await ctx.backend.sessions.create({}, {});
      await ctx.backend.activity.append(activity(session.id, 'session.saved'));
      expect(await ctx.backend.sessions.delete(session.id, {})).toBe(true);
      expect(await ctx.backend.activity.listAfter(0, 10, {})).toEqual([]);
    });
  });
}
