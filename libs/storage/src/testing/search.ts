import { AIMessage, HumanMessage } from '@langchain/core/messages';
import type { SuiteContext } from './context';
import {
  expectStorageError,
  expectValidationError,
  putMessagesCheckpoint,
  sleep,
  uid,
} from './helpers';

export function searchTests(ctx: SuiteContext): void {
  describe('message search', () => {
    async function session(scope: Record<string, string>, title: string) {
      return ctx.backend.sessions.create({ title }, scope);
    }

    async function say(sessionId: string, role: 'user' | 'assistant', content: string) {
      return ctx.backend.messages.create({ sessionId, role, content });
    }

    it('finds messages containing every word, ranked, with a highlighted snippet and the session title', async () => {
      const a = await session({ tenant: 'a' }, 'Deploy notes');
      const dense = await say(a.id, 'assistant', 'Kubernetes kubernetes KUBERNETES rollout');
      const sparse = await say(
        a.id,
        'user',
        'We talked about many things today including kubernetes and the weather and lunch plans and ' +
          'the rollout schedule for next week, and some more filler words to make this long',
      );
      await say(a.id, 'user', 'kubernetes alone');
      const page = await ctx.backend.search.search({ q: 'Kubernetes, rollout!' }, { tenant: 'a' });
      expect(page.total).toBe(2);
      expect(page.hasMore).toBe(false);
      expect(page.hits.map((h) => h.messageId)).toEqual([dense.id, sparse.id]);
      const [first, second] = page.hits;
      expect(first).toMatchObject({
        sessionId: a.id,
        sessionTitle: 'Deploy notes',
        role: 'assistant',
      });
      expect(first?.createdAt).toBeInstanceOf(Date);
      expect(first?.snippet).toContain('[Kubernetes]');
      expect(first?.snippet).toContain('[rollout]');
      expect(second?.snippet).toMatch(/\[kubernetes\]/);
      expect(second?.snippet.length).toBeLessThan(sparse.content.length);
      expect((first?.rank ?? 0) > (second?.rank ?? 0)).toBe(true);
    });

    it('never matches another tenant’s messages; a session outside the scope is not found', async () => {
      const a = await session({ tenant: 'a' }, 'mine');
      const b = await session({ tenant: 'b' }, 'theirs');
      await say(a.id, 'user', 'secret plan alpha');
      await say(b.id, 'user', 'secret plan beta');
      const mine = await ctx.backend.search.search({ q: 'secret plan' }, { tenant: 'a' });
      expect(mine.hits.map((h) => h.sessionId)).toEqual([a.id]);
      expect((await ctx.backend.search.search({ q: 'beta' }, { tenant: 'a' })).total).toBe(0);
      expect((await ctx.backend.search.search({ q: 'secret' }, {})).total).toBe(2);
      await expectStorageError(
        ctx.backend.search.search({ q: 'secret', sessionId: b.id }, { tenant: 'a' }),
        'SESSION_NOT_FOUND',
      );
    });

    it('filters by session, role and time, and pages', async () => {
      const a = await session({}, 'one');
      const b = await session({}, 'two');
      const first = await say(a.id, 'user', 'needle one');
      await sleep(5);
      const cut = new Date();
      await sleep(5);
      await say(a.id, 'assistant', 'needle two');
      await say(b.id, 'user', 'needle three');
      expect((await ctx.backend.search.search({ q: 'needle' }, {})).total).toBe(3);
      const inA = await ctx.backend.search.search({ q: 'needle', sessionId: a.id }, {});
      expect(inA.total).toBe(2);
      const users = await ctx.backend.search.search({ q: 'needle', role: 'user' }, {});
      expect(users.total).toBe(2);
      const early = await ctx.backend.search.search({ q: 'needle', to: cut }, {});
      expect(early.hits.map((h) => h.messageId)).toEqual([first.id]);
      const late = await ctx.backend.search.search({ q: 'needle', from: cut }, {});
      expect(late.total).toBe(2);
      const p1 = await ctx.backend.search.search({ q: 'needle', limit: 2 }, {});
      const p2 = await ctx.backend.search.search({ q: 'needle', limit: 2, offset: 2 }, {});
      expect(p1).toMatchObject({ total: 3, hasMore: true });
      expect(p2).toMatchObject({ total: 3, hasMore: false });
      expect(p2.hits).toHaveLength(1);
      expect(await ctx.backend.search.search({ q: 'needle', offset: 10 }, {})).toEqual({
        hits: [],
        total: 3,
        hasMore: false,
      });
      const ids = [...p1.hits, ...p2.hits].map((h) => h.messageId);
      expect(new Set(ids).size).toBe(3);
    });

    it('follows the projection: checkpointed, rewritten, removed and rebuilt messages', async () => {
      const s = await session({}, 'projected');
      const human = uid('h');
      const ai = uid('a');
      await putMessagesCheckpoint(ctx.backend, s.threadId, [
        new HumanMessage({ id: human, content: 'how do zebras sleep' }),
        new AIMessage({ id: ai, content: 'zebras sleep standing up' }),
      ]);
      expect((await ctx.backend.search.search({ q: 'zebras' }, {})).total).toBe(2);
      await putMessagesCheckpoint(ctx.backend, s.threadId, [
        new HumanMessage({ id: human, content: 'how do giraffes sleep' }),
      ]);
      expect((await ctx.backend.search.search({ q: 'zebras' }, {})).total).toBe(0);
      expect((await ctx.backend.search.search({ q: 'giraffes' }, {})).hits[0]?.messageId).toBe(
        human,
      );
      // A row lost behind the port's back is found again once the projection is rebuilt.
      await ctx.tamper.deleteMessageRow(s.id, human);
      await ctx.backend.rebuildMessageProjection(s.id);
      expect((await ctx.backend.search.search({ q: 'giraffes' }, {})).hits[0]?.messageId).toBe(
        human,
      );
      await ctx.backend.sessions.delete(s.id, {});
      expect((await ctx.backend.search.search({ q: 'giraffes' }, {})).total).toBe(0);
    });

    it('rejects a query without words and bad filters, naming the field', async () => {
      await expectValidationError(ctx.backend.search.search({ q: '' }, {}), 'q');
      await expectValidationError(ctx.backend.search.search({ q: '  ?! ' }, {}), 'q');
      await expectValidationError(ctx.backend.search.search({ q: 'x', limit: 0 }, {}), 'limit');
      await expectValidationError(
        ctx.backend.search.search({ q: 'x', role: 'robot' } as never, {}),
        'role',
      );
    });
  });
}
