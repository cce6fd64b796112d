import { AIMessage, HumanMessage } from '@langchain/core/messages';
import type { SuiteContext } from '../context';
import { expectStorageError, putMessagesCheckpoint, uid } from '../helpers';

/**
 * A message id is unique within its session, not across the server: LangGraph scopes message
 * ids to the thread, and its clients send the same id (`initial-message`) on every thread. Each
 * session reads, rewrites, deletes, rolls back, searches and rates its own row.
 */
export function sharedIdTests(ctx: SuiteContext): void {
  describe('message ids are per session', () => {
    const twoSessions = async () => ({
      a: await ctx.backend.sessions.create({ title: 'one' }, {}),
      b: await ctx.backend.sessions.create({ title: 'two' }, {}),
    });
    const contents = async (sessionId: string): Promise<string[]> =>
      (await ctx.backend.messages.listAll(sessionId, {})).map((m) => m.content);

    it('stores the same id in two sessions, each reading its own', async () => {
      const { a, b } = await twoSessions();
      const id = uid('msg');
      await ctx.backend.messages.create({ id, sessionId: a.id, role: 'user', content: 'in a' });
      await ctx.backend.messages.create({ id, sessionId: b.id, role: 'user', content: 'in b' });
      expect((await ctx.backend.messages.get(a.id, id, {}))?.content).toBe('in a');
      expect((await ctx.backend.messages.get(b.id, id, {}))?.content).toBe('in b');
      expect(await contents(a.id)).toEqual(['in a']);
      expect(await contents(b.id)).toEqual(['in b']);
      expect((await ctx.backend.sessions.get(b.id, {}))?.messageCount).toBe(1);
    });

    it('still refuses the same id twice in one session when another session holds it too', async () => {
      const { a, b } = await twoSessions();
      const id = uid('msg');
      await ctx.backend.messages.create({ id, sessionId: a.id, role: 'user', content: 'a' });
      await ctx.backend.messages.create({ id, sessionId: b.id, role: 'user', content: 'b' });
      await expectStorageError(
        ctx.backend.messages.create({ id, sessionId: b.id, role: 'user', content: 'again' }),
        'CONFLICT',
      );
      expect(await contents(b.id)).toEqual(['b']);
      expect((await ctx.backend.sessions.get(b.id, {}))?.messageCount).toBe(1);
    });

    it('projects checkpoints sharing message ids into each session, and rewinding one leaves the other', async () => {
      const { a, b } = await twoSessions();
      const thread = (tag: string) => [
        new HumanMessage({ id: 'initial-message', content: `question ${tag}` }),
        new AIMessage({ id: 'answer', content: `answer ${tag}` }),
        new HumanMessage({ id: 'follow-up', content: `follow-up ${tag}` }),
      ];
      await putMessagesCheckpoint(ctx.backend, a.threadId, thread('a'));
      await putMessagesCheckpoint(ctx.backend, b.threadId, thread('b'));
      expect(await contents(a.id)).toEqual(['question a', 'answer a', 'follow-up a']);
      expect(await contents(b.id)).toEqual(['question b', 'answer b', 'follow-up b']);
      // A's next checkpoint drops a row, rewrites one and moves one: none of B's rows change.
      await putMessagesCheckpoint(ctx.backend, a.threadId, [
        new HumanMessage({ id: 'follow-up', content: 'follow-up a' }),
        new HumanMessage({ id: 'initial-message', content: 'question a, edited' }),
      ]);
      expect(await contents(a.id)).toEqual(['follow-up a', 'question a, edited']);
      expect(await contents(b.id)).toEqual(['question b', 'answer b', 'follow-up b']);
      expect((await ctx.backend.messages.get(b.id, 'answer', {}))?.content).toBe('answer b');
      expect((await ctx.backend.sessions.get(b.id, {}))?.messageCount).toBe(3);
      await ctx.backend.rebuildMessageProjection(b.id);
      expect(await contents(b.id)).toEqual(['question b', 'answer b', 'follow-up b']);
    });

    it('deletes one session’s messages, leaving the other’s readable and searchable', async () => {
      const { a, b } = await twoSessions();
      const id = uid('msg');
      await ctx.backend.messages.create({ id, sessionId: a.id, role: 'user', content: 'zebra a' });
      await ctx.backend.messages.create({ id, sessionId: b.id, role: 'user', content: 'zebra b' });
      const found = await ctx.backend.search.search({ q: 'zebra' }, {});
      expect(found.hits.map((h) => [h.sessionId, h.messageId]).sort()).toEqual(
        [
          [a.id, id],
          [b.id, id],
        ].sort(),
      );
      expect(await ctx.backend.messages.deleteBySession(a.id)).toBe(1);
      expect(await contents(b.id)).toEqual(['zebra b']);
      const after = await ctx.backend.search.search({ q: 'zebra' }, {});
      expect(after.hits.map((h) => [h.sessionId, h.messageId, h.snippet])).toEqual([
        [b.id, id, expect.stringContaining('zebra')],
      ]);
      await ctx.backend.sessions.delete(b.id, {});
      expect((await ctx.backend.search.search({ q: 'zebra' }, {})).total).toBe(0);
    });

    it('rolls back one session’s run without touching a message of the same id elsewhere', async () => {
      const { a, b } = await twoSessions();
      const id = uid('msg');
      const say = (sessionId: string, content: string, messageId?: string) =>
        ctx.backend.messages.create({ id: messageId, sessionId, role: 'user', content });
      // The id sits at position 2 in A and 0 in B: A's rollback must start at its own row.
      await say(a.id, 'a0');
      await say(a.id, 'a1');
      await say(a.id, 'q', id);
      await say(b.id, 'q', id);
      await say(b.id, 'b1');
      const { run } = await ctx.backend.runs.create({ sessionId: a.id, inputMessageId: id });
      expect(await ctx.backend.rollbackRun(run.id)).toEqual({ messages: 1, checkpoints: 0 });
      expect(await contents(a.id)).toEqual(['a0', 'a1']);
      expect(await contents(b.id)).toEqual(['q', 'b1']);
    });

    it('rates the message of its own session only', async () => {
      const { a, b } = await twoSessions();
      const id = uid('msg');
      await ctx.backend.messages.create({ id, sessionId: a.id, role: 'assistant', content: 'a' });
      await ctx.backend.messages.create({ id, sessionId: b.id, role: 'user', content: 'b' });
      await ctx.backend.feedback.set(a.id, id, { score: 1 }, {});
      expect((await ctx.backend.feedback.forMessages(a.id, [id])).get(id)?.score).toBe(1);
      expect((await ctx.backend.feedback.forMessages(b.id, [id])).size).toBe(0);
      // B's row of that id is a user message: rated there, it is refused as such.
      await expectStorageError(
        ctx.backend.feedback.set(b.id, id, { score: 1 }, {}),
        'VALIDATION_ERROR',
      );
    });
  });
}
