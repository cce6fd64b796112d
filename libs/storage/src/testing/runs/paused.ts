import type { PendingAction } from '@cognition/contracts';
import type { SuiteContext } from '../context';
import { uid } from '../helpers';

const ACTION: PendingAction = {
  tool_calls: [
    { id: 'call_1', name: 'execute', args: { command: 'rm -rf build' }, allowed: ['approve'] },
  ],
};

/** Runs paused for a person's decision (human in the loop, status `requires_action`). */
export function pausedTests(ctx: SuiteContext): void {
  describe('paused runs', () => {
    const pausedRun = async () => {
      const session = await ctx.backend.sessions.create({}, {});
      const { run } = await ctx.backend.runs.create({ sessionId: session.id });
      await ctx.backend.runs.claim(run.id, 'node-a', new Date(0), new Date(Date.now() + 60_000));
      const paused = await ctx.backend.runs.update(run.id, {
        status: 'requires_action',
        pendingAction: ACTION,
      });
      return { session, paused };
    };

    it('stores what a paused run waits for, and it keeps holding its session', async () => {
      const { session, paused } = await pausedRun();
      expect(paused).toMatchObject({ status: 'requires_action', pendingAction: ACTION });
      expect((await ctx.backend.runs.get(paused.id))?.pendingAction).toEqual(ACTION);
      expect((await ctx.backend.runs.getActive(session.id))?.id).toBe(paused.id);
      await expect(ctx.backend.runs.create({ sessionId: session.id })).rejects.toMatchObject({
        code: 'RUN_IN_PROGRESS',
      });
      // Not listed for recovery, and no node may claim it: no process executes a paused run.
      expect((await ctx.backend.runs.listActive()).map((r) => r.id)).not.toContain(paused.id);
      expect(await ctx.backend.runs.claim(paused.id, 'node-b', new Date(), new Date())).toBeNull();
    });

    it('keeps pending runs waiting while a run is paused', async () => {
      const { session } = await pausedRun();
      const { run: waiting } = await ctx.backend.runs.create({
        sessionId: session.id,
        status: 'pending',
        pendingInput: { messageId: uid('m'), content: 'next', parentId: null, metadata: {} },
      });
      await expect(ctx.backend.runs.promote(waiting.id)).rejects.toMatchObject({
        code: 'RUN_IN_PROGRESS',
      });
    });

    it('resumes a paused run exactly once, however many settle it at once', async () => {
      const { session, paused } = await pausedRun();
      const until = new Date(Date.now() + 30_000);
      const results = await Promise.all([
        ctx.backend.runs.settlePaused(paused.id, {
          status: 'queued',
          ownerNode: 'node-b',
          leaseExpiresAt: until,
        }),
        ctx.backend.runs.settlePaused(paused.id, {
          status: 'queued',
          ownerNode: 'node-c',
          leaseExpiresAt: until,
        }),
        ctx.backend.runs.settlePaused(paused.id, {
          status: 'aborted',
          error: { code: 'ABORTED', message: 'no' },
          finishedAt: new Date(),
        }),
      ]);
      const winners = results.filter((run) => run !== null);
      expect(winners).toHaveLength(1);
      const stored = await ctx.backend.runs.get(paused.id);
      expect(stored).toEqual(winners[0]);
      expect(stored?.pendingAction).toBeNull();
      if (stored?.status === 'queued') {
        expect(stored.ownerNode).toMatch(/^node-[bc]$/);
        expect((await ctx.backend.runs.getActive(session.id))?.id).toBe(paused.id);
      } else {
        expect(stored).toMatchObject({ status: 'aborted', error: { code: 'ABORTED' } });
        expect(await ctx.backend.runs.getActive(session.id)).toBeNull();
      }
    });

    it('aborts a paused run, which frees its session; a run that is not paused is left alone', async () => {
      const { session, paused } = await pausedRun();
      const finishedAt = new Date();
      const aborted = await ctx.backend.runs.settlePaused(paused.id, {
        status: 'aborted',
        error: { code: 'ABORTED', message: 'Aborted while waiting for a decision' },
        finishedAt,
      });
      expect(aborted).toMatchObject({ status: 'aborted', pendingAction: null, finishedAt });
      expect(await ctx.backend.runs.getActive(session.id)).toBeNull();
      expect(await ctx.backend.runs.settlePaused(paused.id, { status: 'queued' })).toBeNull();
      expect((await ctx.backend.runs.get(paused.id))?.status).toBe('aborted');
      await expect(
        ctx.backend.runs.settlePaused(uid('missing'), { status: 'queued' }),
      ).rejects.toMatchObject({ code: 'RUN_NOT_FOUND' });
    });
  });
}
