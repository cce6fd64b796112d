import type { ListSessionsQuery } from '@cognition/contracts';
import type { SuiteContext } from '../context';
import { expectValidationError, sleep } from '../helpers';

/** Session list filters (agent, title text) and orderings, on top of `sessionTests`' basics. */
export function sessionListTests(ctx: SuiteContext): void {
  describe('session list: filters and order', () => {
    const titles = async (query: ListSessionsQuery, scope = {}): Promise<(string | null)[]> =>
      (await ctx.backend.sessions.list(query, scope)).sessions.map((s) => s.title);

    it('filters by agent name and by text in the title (case-insensitive), with the other filters', async () => {
      await ctx.backend.sessions.create({ title: 'Quarterly REPORT', agentName: 'writer' }, {});
      await ctx.backend.sessions.create({ title: 'report draft', agentName: 'default' }, {});
      await ctx.backend.sessions.create({ title: 'Planning', agentName: 'writer' }, {});
      await ctx.backend.sessions.create({ agentName: 'writer' }, {});
      // LIKE wildcards in the text are plain characters.
      await ctx.backend.sessions.create({ title: '100% done_', agentName: 'writer' }, {});
      const sorted = async (query: ListSessionsQuery) => (await titles(query)).sort();
      expect(await sorted({ agentName: 'writer' })).toEqual(
        ['100% done_', 'Planning', 'Quarterly REPORT', null].sort(),
      );
      expect(await sorted({ titleContains: 'report' })).toEqual([
        'Quarterly REPORT',
        'report draft',
      ]);
      expect(await sorted({ titleContains: 'Report', agentName: 'writer' })).toEqual([
        'Quarterly REPORT',
      ]);
      expect(await sorted({ titleContains: '%' })).toEqual(['100% done_']);
      expect(await sorted({ titleContains: 'e_' })).toEqual(['100% done_']);
      expect(await sorted({ titleContains: 'nothing like it' })).toEqual([]);
      expect((await ctx.backend.sessions.list({ agentName: 'writer', limit: 1 }, {})).total).toBe(
        4,
      );
    });

    it('orders by title, creation time or message count, either way, with stable ties', async () => {
      const b = await ctx.backend.sessions.create({ title: 'beta' }, {});
      await sleep(5);
      await ctx.backend.sessions.create({ title: 'alpha' }, {});
      await sleep(5);
      const c = await ctx.backend.sessions.create({ title: 'gamma' }, {});
      await ctx.backend.sessions.updateMessageCount(b.id, 3);
      await ctx.backend.sessions.updateMessageCount(c.id, 1);
      expect(await titles({ sort: 'title', order: 'asc' })).toEqual(['alpha', 'beta', 'gamma']);
      expect(await titles({ sort: 'title', order: 'desc' })).toEqual(['gamma', 'beta', 'alpha']);
      expect(await titles({ sort: 'created_at', order: 'asc' })).toEqual([
        'beta',
        'alpha',
        'gamma',
      ]);
      expect(await titles({ sort: 'created_at' })).toEqual(['gamma', 'alpha', 'beta']);
      expect(await titles({ sort: 'message_count' })).toEqual(['beta', 'gamma', 'alpha']);
      expect(await titles({ sort: 'message_count', order: 'asc' })).toEqual([
        'alpha',
        'gamma',
        'beta',
      ]);
      // Pages of a sorted list neither repeat nor skip a session.
      const first = await titles({ sort: 'title', order: 'asc', limit: 2 });
      const second = await titles({ sort: 'title', order: 'asc', limit: 2, offset: 2 });
      expect([...first, ...second]).toEqual(['alpha', 'beta', 'gamma']);
    });

    it('rejects an unknown sort, order or agent name, and an empty title text, naming the field', async () => {
      const list = (query: unknown) => ctx.backend.sessions.list(query as ListSessionsQuery, {});
      await expectValidationError(list({ sort: 'cost' }), 'sort');
      await expectValidationError(list({ order: 'sideways' }), 'order');
      await expectValidationError(list({ titleContains: '' }), 'titleContains');
      await expectValidationError(list({ agentName: 'not a name!' }), 'agentName');
    });
  });
}
