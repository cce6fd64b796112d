import type { Message } from '@cognition/contracts';
import type { BaseMessage } from '@langchain/core/messages';
import { AIMessage, HumanMessage } from '@langchain/core/messages';
import {
  checkpointWithMessage,
  putCheckpointCopy,
  rootCheckpoint,
  threadHistory,
} from '../../checkpoints/time-travel';
import { COGNITION_KWARGS_KEY } from '../../checkpoints/projection';
import { parseRetention, pruneThread } from '../../checkpoints/retention';
import type { SuiteContext } from '../context';
import { putMessagesCheckpoint, uid } from '../helpers';

function must<T>(value: T | null | undefined): T {
  if (value === null || value === undefined) throw new Error('expected a value');
  return value;
}

function turn(question: string, answer: string): BaseMessage[] {
  const human = uid('h');
  return [
    new HumanMessage({ id: human, content: question }),
    new AIMessage({
      id: uid('a'),
      content: answer,
      additional_kwargs: { [COGNITION_KWARGS_KEY]: { parentId: human } },
    }),
  ];
}

/** History, rewind and fork over the backend's checkpointer (time-travel.ts). */
export function timeTravelTests(ctx: SuiteContext): void {
  describe('time travel', () => {
    async function twoTurns() {
      const session = await ctx.backend.sessions.create({}, {});
      const first = turn('first?', 'one');
      const second = turn('second?', 'two');
      const afterFirst = await putMessagesCheckpoint(ctx.backend, session.threadId, first, {
        step: 1,
      });
      const afterSecond = await putMessagesCheckpoint(
        ctx.backend,
        session.threadId,
        [...first, ...second],
        { step: 2 },
      );
      return { session, first, second, afterFirst, afterSecond };
    }

    it('lists the thread history newest first with counts and previews, paged', async () => {
      const { session, afterFirst, afterSecond } = await twoTurns();
      const all = await threadHistory(ctx.backend.checkpointer, session.threadId, {
        limit: 10,
        offset: 0,
      });
      expect(all.hasMore).toBe(false);
      expect(all.checkpoints.map((c) => c.checkpointId)).toEqual([afterSecond, afterFirst]);
      expect(all.checkpoints[0]).toMatchObject({
        parentCheckpointId: null,
        step: 2,
        messageCount: 4,
        lastMessagePreview: 'two',
      });
      expect(all.checkpoints[1]).toMatchObject({ messageCount: 2, lastMessagePreview: 'one' });
      const paged = await threadHistory(ctx.backend.checkpointer, session.threadId, {
        limit: 1,
        offset: 1,
      });
      expect(paged).toEqual({ checkpoints: [all.checkpoints[1]], hasMore: false });
      expect(
        (await threadHistory(ctx.backend.checkpointer, session.threadId, { limit: 1, offset: 0 }))
          .hasMore,
      ).toBe(true);
    });

    it('rewinds: a new head equal to the old checkpoint, the projection follows, history kept', async () => {
      const { session, first, afterFirst, afterSecond } = await twoTurns();
      const source = await rootCheckpoint(ctx.backend.checkpointer, session.threadId, afterFirst);
      expect(source).toBeDefined();
      const head = await putCheckpointCopy(
        ctx.backend.checkpointer,
        must(source),
        session.threadId,
      );
      expect(head > afterSecond).toBe(true);
      const latest = await rootCheckpoint(ctx.backend.checkpointer, session.threadId);
      expect(latest?.checkpoint.id).toBe(head);
      expect(latest?.checkpoint.channel_values).toEqual(source?.checkpoint.channel_values);
      expect(latest?.parentConfig?.configurable?.['checkpoint_id']).toBe(afterSecond);
      const rows = await ctx.backend.messages.listAll(session.id, {});
      expect(rows.map((m) => m.id)).toEqual(first.map((m) => m.id));
      expect((await ctx.backend.sessions.get(session.id, {}))?.messageCount).toBe(2);
      const history = await threadHistory(ctx.backend.checkpointer, session.threadId, {
        limit: 10,
        offset: 0,
      });
      expect(history.checkpoints.map((c) => c.checkpointId)).toEqual([
        head,
        afterSecond,
        afterFirst,
      ]);
      expect(history.checkpoints[0]?.step).toBe(3);
      expect(
        await rootCheckpoint(ctx.backend.checkpointer, session.threadId, 'nope'),
      ).toBeUndefined();
    });

    it('resolves a message to the checkpoint right after it, and to none once retention pruned that point', async () => {
      const session = await ctx.backend.sessions.create({}, {});
      const [t1, t2, t3] = [turn('q1', 'a1'), turn('q2', 'a2'), turn('q3', 'a3')];
      const c1 = await putMessagesCheckpoint(ctx.backend, session.threadId, t1, { step: 1 });
      const c2 = await putMessagesCheckpoint(ctx.backend, session.threadId, [...t1, ...t2], {
        step: 2,
        parentId: c1,
      });
      const c3 = await putMessagesCheckpoint(ctx.backend, session.threadId, [...t1, ...t2, ...t3], {
        step: 3,
        parentId: c2,
      });
      const at = async (message: BaseMessage | undefined) =>
        (await checkpointWithMessage(ctx.backend.checkpointer, session.threadId, must(message?.id)))
          ?.checkpoint.id;
      expect(await at(t1[1])).toBe(c1);
      // Not its checkpoint's last message, but the step that added it is kept (its parent).
      expect(await at(t2[0])).toBe(c2);
      expect(await at(t3[1])).toBe(c3);

      const keepLatest = must(parseRetention('keep_latest'));
      expect(await pruneThread(ctx.backend.checkpoints, session.threadId, keepLatest)).toBe(2);
      // Only the head is left: it holds every message, but is right after the last one only.
      expect(await at(t1[1])).toBeUndefined();
      expect(await at(t2[0])).toBeUndefined();
      expect(await at(t3[0])).toBeUndefined();
      expect(await at(t3[1])).toBe(c3);
    });

    it('forks: the state copied to another session with its message ids, the source unchanged', async () => {
      const { session, first, second, afterSecond } = await twoTurns();
      const before = {
        session: await ctx.backend.sessions.get(session.id, {}),
        rows: await ctx.backend.messages.listAll(session.id, {}),
        history: await threadHistory(ctx.backend.checkpointer, session.threadId, {
          limit: 10,
          offset: 0,
        }),
      };
      const found = await checkpointWithMessage(
        ctx.backend.checkpointer,
        session.threadId,
        must(second[1]?.id),
      );
      expect(found?.checkpoint.id).toBe(afterSecond);
      expect(
        (
          await checkpointWithMessage(
            ctx.backend.checkpointer,
            session.threadId,
            must(first[1]?.id),
          )
        )?.checkpoint.id,
      ).not.toBe(afterSecond);
      expect(
        await checkpointWithMessage(ctx.backend.checkpointer, session.threadId, 'missing'),
      ).toBeUndefined();
      const fork = await ctx.backend.sessions.create({ parentId: session.id }, {});
      await putCheckpointCopy(ctx.backend.checkpointer, must(found), fork.threadId);
      // Message ids are per session: the fork's rows keep them (and the parent links with them).
      const forked = await ctx.backend.messages.listAll(fork.id, {});
      const rowOf = ({ createdAt: _, sessionId: __, ...row }: Message) => row;
      expect(forked.map(rowOf)).toEqual(before.rows.map(rowOf));
      expect(forked.every((row) => row.sessionId === fork.id)).toBe(true);
      expect((await ctx.backend.sessions.get(fork.id, {}))?.messageCount).toBe(4);
      // The source: same session row, rows and checkpoints.
      expect(await ctx.backend.sessions.get(session.id, {})).toEqual(before.session);
      expect(await ctx.backend.messages.listAll(session.id, {})).toEqual(before.rows);
      expect(
        await threadHistory(ctx.backend.checkpointer, session.threadId, { limit: 10, offset: 0 }),
      ).toEqual(before.history);
    });
  });
}
