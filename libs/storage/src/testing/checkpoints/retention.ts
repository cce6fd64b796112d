import type { BaseMessage } from '@langchain/core/messages';
import { AIMessage, HumanMessage } from '@langchain/core/messages';
import { parseRetention, pruneThread } from '../../checkpoints/retention';
import { rootCheckpoint, threadHistory } from '../../checkpoints/time-travel';
import type { SuiteContext } from '../context';
import { putMessagesCheckpoint, uid } from '../helpers';

/** Steps of the long thread: a thread of a 1,000-step agent loop. */
export const RETENTION_STEPS = 1000;

function policy(text: string) {
  const parsed = parseRetention(text);
  if (!parsed) throw new Error(`bad policy ${text}`);
  return parsed;
}

/** Prunes in batches until a step deletes less than a batch; returns the total. */
async function pruneAll(
  ctx: SuiteContext,
  threadId: string,
  text: string,
  now?: Date,
): Promise<number> {
  let total = 0;
  for (;;) {
    const deleted = await pruneThread(ctx.backend.checkpoints, threadId, policy(text), {
      batch: 200,
      ...(now ? { now } : {}),
    });
    total += deleted;
    if (deleted < 200) return total;
  }
}

/** Checkpoint retention (COGNITION_CHECKPOINT_RETENTION) on the backend's checkpoints. */
export function retentionTests(ctx: SuiteContext): void {
  describe('checkpoint retention', () => {
    /** A session whose thread has `steps` root checkpoints; a message every 100 steps. */
    async function longThread(steps: number) {
      const session = await ctx.backend.sessions.create({}, {});
      const messages: BaseMessage[] = [];
      let head = '';
      for (let step = 1; step <= steps; step += 1) {
        if (step % 100 === 1) {
          messages.push(
            step % 200 === 1
              ? new HumanMessage({ id: uid('h'), content: `question at step ${step}` })
              : new AIMessage({ id: uid('a'), content: `answer at step ${step}` }),
          );
        }
        head = await putMessagesCheckpoint(ctx.backend, session.threadId, [...messages], { step });
      }
      return { session, head, messages };
    }

    it(`prunes a ${RETENTION_STEPS}-step thread to keep_last:10 in batches: the footprint shrinks, the head, the rows and the kept history stay`, async () => {
      const { session, head, messages } = await longThread(RETENTION_STEPS);
      const before = await ctx.backend.checkpoints.footprint(session.threadId);
      expect(before.checkpoints).toBe(RETENTION_STEPS);
      const rowsBefore = await ctx.backend.messages.listAll(session.id, {});
      expect(rowsBefore).toHaveLength(messages.length);

      expect(await pruneAll(ctx, session.threadId, 'keep_last:10')).toBe(RETENTION_STEPS - 10);

      const after = await ctx.backend.checkpoints.footprint(session.threadId);
      expect(after.checkpoints).toBe(10);
      // Measured: what the thread's checkpoints occupy falls with the count (each of these
      // checkpoints is about the same size).
      expect(after.bytes).toBeLessThan(before.bytes / 50);
      expect(
        (await rootCheckpoint(ctx.backend.checkpointer, session.threadId))?.checkpoint.id,
      ).toBe(head);
      expect(await ctx.backend.messages.listAll(session.id, {})).toEqual(rowsBefore);
      const history = await threadHistory(ctx.backend.checkpointer, session.threadId, {
        limit: 50,
        offset: 0,
      });
      expect(history.checkpoints).toHaveLength(10);
      expect(history.checkpoints[0]?.checkpointId).toBe(head);
      expect(history.checkpoints.map((c) => c.step)).toEqual(
        Array.from({ length: 10 }, (_, i) => RETENTION_STEPS - i),
      );
      // A second pass has nothing left to do.
      expect(await pruneAll(ctx, session.threadId, 'keep_last:10')).toBe(0);
    }, 120_000);

    it('keep_latest keeps only the head; a pruned checkpoint is gone for rewind', async () => {
      const { session, head } = await longThread(30);
      const refs = await ctx.backend.checkpoints.list(session.threadId);
      expect(refs).toHaveLength(30);
      expect(refs[0]?.checkpointId).toBe(head);
      const oldest = refs[refs.length - 1]?.checkpointId ?? '';
      expect(await pruneAll(ctx, session.threadId, 'keep_latest')).toBe(29);
      expect(await ctx.backend.checkpoints.list(session.threadId)).toEqual([refs[0]]);
      expect(
        await rootCheckpoint(ctx.backend.checkpointer, session.threadId, oldest),
      ).toBeUndefined();
      expect((await ctx.backend.sessions.get(session.id, {}))?.messageCount).toBe(1);
    });

    it('max_age prunes by when checkpoints were written, never the head', async () => {
      const { session } = await longThread(5);
      expect(await pruneAll(ctx, session.threadId, 'max_age:1h')).toBe(0);
      const future = new Date(Date.now() + 2 * 3_600_000);
      expect(await pruneAll(ctx, session.threadId, 'max_age:1h', future)).toBe(4);
      expect(await ctx.backend.checkpoints.list(session.threadId)).toHaveLength(1);
      expect(await pruneAll(ctx, session.threadId, 'all')).toBe(0);
    });

    it('never deletes the head, even when asked, and lets concurrent pruners delete each checkpoint once', async () => {
      const { session, head } = await longThread(40);
      expect(await ctx.backend.checkpoints.delete(session.threadId, [head])).toBe(0);
      const results = await Promise.all([
        pruneAll(ctx, session.threadId, 'keep_last:5'),
        pruneAll(ctx, session.threadId, 'keep_last:5'),
        pruneAll(ctx, session.threadId, 'keep_last:5'),
      ]);
      expect(results.reduce((a, b) => a + b, 0)).toBe(35);
      expect(await ctx.backend.checkpoints.list(session.threadId)).toHaveLength(5);
    });

    it('reports an empty footprint for an unknown thread, and parses the policy grammar', async () => {
      expect(await ctx.backend.checkpoints.footprint(uid('thread'))).toEqual({
        checkpoints: 0,
        writes: 0,
        bytes: 0,
      });
      expect(parseRetention('keep_latest')).toEqual({ kind: 'keep_last', count: 1 });
      expect(parseRetention('max_age:7d')).toEqual({ kind: 'max_age', ms: 7 * 86_400_000 });
      for (const bad of ['keep_last:0', 'max_age:5w', 'some', 'keep_last:-1']) {
        expect(parseRetention(bad)).toBeNull();
      }
    });
  });
}
