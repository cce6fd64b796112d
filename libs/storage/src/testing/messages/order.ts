import type { SuiteContext } from '../context';
import { expectValidationError } from '../helpers';

/** Message pages newest first. */
export function messageOrderTests(ctx: SuiteContext): void {
  describe('messages newest first', () => {
    it('pages under order desc with offsets counted from the newest, stable with asc', async () => {
      const session = await ctx.backend.sessions.create({}, {});
      for (let i = 0; i < 5; i += 1) {
        await ctx.backend.messages.create({
          sessionId: session.id,
          role: 'user',
          content: `m${i}`,
        });
      }
      const desc = await ctx.backend.messages.page(session.id, { order: 'desc', limit: 2 }, {});
      expect(desc.messages.map((m) => m.content)).toEqual(['m4', 'm3']);
      expect(desc).toMatchObject({ total: 5, hasMore: true });
      const next = await ctx.backend.messages.page(
        session.id,
        { order: 'desc', limit: 2, offset: 4 },
        {},
      );
      expect(next.messages.map((m) => m.content)).toEqual(['m0']);
      expect(next.hasMore).toBe(false);
      const asc = await ctx.backend.messages.page(session.id, { limit: 2, offset: 3 }, {});
      expect(asc.messages.map((m) => m.content)).toEqual(['m3', 'm4']);
      await expectValidationError(
        ctx.backend.messages.page(session.id, { order: 'sideways' as never }, {}),
        'order',
      );
    });
  });
}
