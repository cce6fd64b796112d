import type { SuiteContext } from './context';
import { expectStorageError, expectValidationError, uid } from './helpers';

/** Ratings of assistant messages and their share of the aggregates. */
export function feedbackTests(ctx: SuiteContext): void {
  describe('feedback', () => {
    async function conversation(scope: Record<string, string> = {}) {
      const session = await ctx.backend.sessions.create({}, scope);
      const user = await ctx.backend.messages.create({
        sessionId: session.id,
        role: 'user',
        content: 'question',
      });
      const assistant = await ctx.backend.messages.create({
        sessionId: session.id,
        role: 'assistant',
        content: 'answer',
      });
      return { session, user, assistant };
    }

    it('sets, replaces (idempotently) and deletes the feedback of an assistant message', async () => {
      const { session, assistant } = await conversation();
      const first = await ctx.backend.feedback.set(
        session.id,
        assistant.id,
        { score: 2, text: 'meh' },
        {},
      );
      expect(first).toMatchObject({ score: 2, text: 'meh' });
      const again = await ctx.backend.feedback.set(session.id, assistant.id, { score: 5 }, {});
      expect(again).toMatchObject({ score: 5, text: null });
      expect(again.createdAt.getTime()).toBe(first.createdAt.getTime());
      await ctx.backend.feedback.set(session.id, assistant.id, { score: 5 }, {});
      const read = await ctx.backend.feedback.forMessages(session.id, [assistant.id, 'other']);
      expect([...read.keys()]).toEqual([assistant.id]);
      expect(read.get(assistant.id)).toMatchObject({ score: 5, text: null });
      const stats = await ctx.backend.usage.stats({}, {});
      expect(stats.feedback).toEqual({ count: 1, averageScore: 5 });
      expect(await ctx.backend.feedback.delete(session.id, assistant.id, {})).toBe(true);
      expect(await ctx.backend.feedback.delete(session.id, assistant.id, {})).toBe(false);
      expect((await ctx.backend.feedback.forMessages(session.id, [assistant.id])).size).toBe(0);
      expect((await ctx.backend.usage.stats({}, {})).feedback).toEqual({
        count: 0,
        averageScore: null,
      });
    });

    it('refuses other roles, unknown messages, other scopes and bad scores', async () => {
      const { session, user, assistant } = await conversation({ tenant: 'a' });
      const notAssistant = await expectStorageError(
        ctx.backend.feedback.set(session.id, user.id, { score: 3 }, {}),
        'VALIDATION_ERROR',
      );
      expect(notAssistant.details.issues?.map((i) => i.path)).toEqual(['messageId']);
      await expectStorageError(
        ctx.backend.feedback.set(session.id, uid('missing'), { score: 3 }, {}),
        'MESSAGE_NOT_FOUND',
      );
      await expectStorageError(
        ctx.backend.feedback.set(session.id, assistant.id, { score: 3 }, { tenant: 'b' }),
        'SESSION_NOT_FOUND',
      );
      await expectStorageError(
        ctx.backend.feedback.delete(session.id, assistant.id, { tenant: 'b' }),
        'SESSION_NOT_FOUND',
      );
      await expectValidationError(
        ctx.backend.feedback.set(session.id, assistant.id, { score: 6 }, {}),
        'score',
      );
      await expectValidationError(
        ctx.backend.feedback.set(session.id, assistant.id, { score: 0 }, {}),
        'score',
      );
    });

    it('keeps the feedback figures exact under concurrent writes', async () => {
      const { session } = await conversation();
      const answers = [];
      for (let i = 0; i < 8; i += 1) {
        answers.push(
          await ctx.backend.messages.create({
            sessionId: session.id,
            role: 'assistant',
            content: `answer ${i}`,
          }),
        );
      }
      await Promise.all(
        answers.flatMap((answer, i) => [
          ctx.backend.feedback.set(session.id, answer.id, { score: 1 + (i % 5) }, {}),
          ctx.backend.feedback.set(session.id, answer.id, { score: 1 + (i % 5) }, {}),
        ]),
      );
      const stats = await ctx.backend.usage.stats({}, {});
      const sum = answers.reduce((total, _a, i) => total + 1 + (i % 5), 0);
      expect(stats.feedback.count).toBe(8);
      expect(stats.feedback.averageScore).toBeCloseTo(sum / 8, 3);
    });
  });
}
