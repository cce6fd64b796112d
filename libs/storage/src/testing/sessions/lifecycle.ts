import { HumanMessage } from '@langchain/core/messages';
import type { SuiteContext } from '../context';
import {
  expectStorageError,
  expectValidationError,
  putMessagesCheckpoint,
  sleep,
  uid,
} from '../helpers';

const MINUTE = 60_000;

/** A clock `offsetMs` ahead of real time (the policy's `now`). */
const ahead = (offsetMs: number) => () => new Date(Date.now() + offsetMs);

/** Session lifecycle fields, the read-time status rule, TTL expiry, the pipeline version check. */
export function lifecycleTests(ctx: SuiteContext): void {
  describe('session lifecycle fields', () => {
    it('stores system prompt, task, expiry and retention at create and update, and ended_at', async () => {
      const expiresAt = new Date(Date.now() + 3_600_000);
      const session = await ctx.backend.sessions.create(
        {
          systemPrompt: 'Be terse.',
          task: 'Review PR 42',
          expiresAt,
          checkpointRetention: 'keep_last:5',
        },
        {},
      );
      expect(session).toMatchObject({
        systemPrompt: 'Be terse.',
        task: 'Review PR 42',
        expiresAt,
        checkpointRetention: 'keep_last:5',
        endedAt: null,
      });
      expect(session.lastActivityAt).toBeInstanceOf(Date);
      const endedAt = new Date();
      const updated = await ctx.backend.sessions.update(
        session.id,
        { systemPrompt: null, task: 'Merge it', status: 'completed', endedAt, expiresAt: null },
        {},
      );
      expect(updated).toMatchObject({
        systemPrompt: null,
        task: 'Merge it',
        status: 'completed',
        endedAt,
        expiresAt: null,
        checkpointRetention: 'keep_last:5',
        version: 2,
      });
      expect(await ctx.backend.sessions.get(session.id, {})).toEqual(updated);
    });

    it('refuses to store `abandoned` and a malformed retention, naming the field', async () => {
      const session = await ctx.backend.sessions.create({}, {});
      await expectValidationError(
        ctx.backend.sessions.update(session.id, { status: 'abandoned' as never }, {}),
        'status',
      );
      await expectValidationError(
        ctx.backend.sessions.create({ checkpointRetention: 'keep_last:0' }, {}),
        'checkpointRetention',
      );
    });

    it('moves lastActivityAt on every session write and message insert', async () => {
      const session = await ctx.backend.sessions.create({}, {});
      await sleep(5);
      const updated = await ctx.backend.sessions.update(session.id, { title: 't' }, {});
      expect(updated.lastActivityAt.getTime()).toBeGreaterThan(session.lastActivityAt.getTime());
      await sleep(5);
      await ctx.backend.messages.create({ sessionId: session.id, role: 'user', content: 'hi' });
      const after = await ctx.backend.sessions.get(session.id, {});
      expect(after?.lastActivityAt.getTime()).toBeGreaterThan(updated.lastActivityAt.getTime());
      expect(after?.version).toBe(2);
    });
  });

  describe('abandoned status (read time)', () => {
    it('reads an idle active session as abandoned past the threshold, on get and list, and filters in the database', async () => {
      ctx.backend.setSessionPolicy({ abandonAfterSeconds: 1800 });
      const idle = await ctx.backend.sessions.create({ title: 'idle' }, {});
      const suspended = await ctx.backend.sessions.create({ title: 'suspended' }, {});
      await ctx.backend.sessions.update(suspended.id, { status: 'suspended' }, {});
      // 29 minutes later: nothing is abandoned yet.
      ctx.backend.setSessionPolicy({ now: ahead(29 * MINUTE) });
      expect((await ctx.backend.sessions.get(idle.id, {}))?.status).toBe('active');
      expect((await ctx.backend.sessions.list({ status: 'abandoned' }, {})).total).toBe(0);
      // A session active 20 ms later, and a clock 1800 s after that activity minus 1 ms: the
      // older one is past the threshold, the recent one is not (the threshold splits them).
      await sleep(20);
      const recent = await ctx.backend.sessions.create({ title: 'recent' }, {});
      const at = recent.lastActivityAt.getTime() + 1800 * 1000 - 1;
      ctx.backend.setSessionPolicy({ now: () => new Date(at) });
      expect((await ctx.backend.sessions.get(idle.id, {}))?.status).toBe('abandoned');
      expect((await ctx.backend.sessions.get(recent.id, {}))?.status).toBe('active');
      expect((await ctx.backend.sessions.get(suspended.id, {}))?.status).toBe('suspended');
      const abandoned = await ctx.backend.sessions.list({ status: 'abandoned' }, {});
      expect(abandoned.sessions.map((s) => s.id)).toEqual([idle.id]);
      expect(abandoned.total).toBe(1);
      expect(abandoned.sessions[0]?.status).toBe('abandoned');
      const active = await ctx.backend.sessions.list({ status: 'active' }, {});
      expect(active.sessions.map((s) => s.id)).toEqual([recent.id]);
      const all = await ctx.backend.sessions.list({}, {});
      expect(all.sessions.map((s) => s.status).sort()).toEqual([
        'abandoned',
        'active',
        'suspended',
      ]);
      // The filter runs before paging: a page of one still counts every match.
      const page = await ctx.backend.sessions.list({ status: 'active', limit: 1, offset: 1 }, {});
      expect(page).toMatchObject({ total: 1, sessions: [] });
      // Activity brings it back: a write moves lastActivityAt to real time.
      ctx.backend.setSessionPolicy({ now: ahead(0) });
      await ctx.backend.messages.create({ sessionId: idle.id, role: 'user', content: 'back' });
      expect((await ctx.backend.sessions.get(idle.id, {}))?.status).toBe('active');
      // A threshold of 0 disables the rule.
      ctx.backend.setSessionPolicy({ abandonAfterSeconds: 0, now: ahead(1000 * MINUTE) });
      expect((await ctx.backend.sessions.list({ status: 'abandoned' }, {})).total).toBe(0);
      expect((await ctx.backend.sessions.get(idle.id, {}))?.status).toBe('active');
    });
  });

  describe('TTL expiry', () => {
    it('never returns an expired session from a read, before any sweep', async () => {
      const past = await ctx.backend.sessions.create(
        { expiresAt: new Date(Date.now() - 1000) },
        {},
      );
      const message = await ctx.backend.messages.create({
        sessionId: past.id,
        role: 'user',
        content: 'x',
      });
      const kept = await ctx.backend.sessions.create({}, {});
      expect(await ctx.backend.sessions.get(past.id, {})).toBeNull();
      expect((await ctx.backend.sessions.list({}, {})).sessions.map((s) => s.id)).toEqual([
        kept.id,
      ]);
      await expectStorageError(ctx.backend.messages.page(past.id, {}, {}), 'SESSION_NOT_FOUND');
      expect(await ctx.backend.messages.get(past.id, message.id, {})).toBeNull();
      await expectStorageError(
        ctx.backend.sessions.update(past.id, { title: 'x' }, {}),
        'SESSION_NOT_FOUND',
      );
      await expectStorageError(ctx.backend.activity.page(past.id, {}, {}), 'SESSION_NOT_FOUND');
      expect(await ctx.backend.sessions.delete(past.id, {})).toBe(false);
    });

    it('expires idle sessions after ttlSeconds unless expiresAt says otherwise, and the sweep deletes exactly the expired ones in batches', async () => {
      ctx.backend.setSessionPolicy({ ttlSeconds: 600 });
      const idle1 = await ctx.backend.sessions.create({ title: 'idle1' }, {});
      const idle2 = await ctx.backend.sessions.create({ title: 'idle2' }, {});
      const pinned = await ctx.backend.sessions.create(
        { title: 'pinned', expiresAt: new Date(Date.now() + 3_600_000) },
        {},
      );
      await putMessagesCheckpoint(ctx.backend, idle1.threadId, [
        new HumanMessage({ id: uid('h'), content: 'q' }),
      ]);
      expect(await ctx.backend.sessions.sweepExpired(10)).toEqual([]);
      // 11 minutes later the two idle sessions are expired; the pinned one is not.
      ctx.backend.setSessionPolicy({ now: ahead(11 * MINUTE) });
      const fresh = await ctx.backend.sessions.create(
        { title: 'fresh', expiresAt: new Date(Date.now() + 3_600_000) },
        {},
      );
      expect((await ctx.backend.sessions.list({}, {})).sessions.map((s) => s.title).sort()).toEqual(
        ['fresh', 'pinned'],
      );
      const first = await ctx.backend.sessions.sweepExpired(1);
      expect(first).toHaveLength(1);
      const second = await ctx.backend.sessions.sweepExpired(10);
      expect([...first, ...second].sort()).toEqual([idle1.id, idle2.id].sort());
      expect(await ctx.backend.sessions.sweepExpired(10)).toEqual([]);
      // Deleted with everything they own; the others are untouched.
      ctx.backend.setSessionPolicy({ ttlSeconds: 0, now: ahead(0) });
      expect(await ctx.backend.sessions.get(idle1.id, {})).toBeNull();
      expect(
        await ctx.backend.checkpointer.getTuple({
          configurable: { thread_id: idle1.threadId, checkpoint_ns: '' },
        }),
      ).toBeUndefined();
      expect((await ctx.backend.sessions.get(pinned.id, {}))?.title).toBe('pinned');
      expect((await ctx.backend.sessions.get(fresh.id, {}))?.title).toBe('fresh');
    });

    it('lets two concurrent sweeps delete each expired session once', async () => {
      const ids = await Promise.all(
        Array.from(
          { length: 6 },
          async () =>
            (await ctx.backend.sessions.create({ expiresAt: new Date(Date.now() - 1000) }, {})).id,
        ),
      );
      const [a, b] = await Promise.all([
        ctx.backend.sessions.sweepExpired(100),
        ctx.backend.sessions.sweepExpired(100),
      ]);
      expect([...(a ?? []), ...(b ?? [])].sort()).toEqual([...ids].sort());
    });
  });

  describe('pipeline version check', () => {
    it('lets one of two concurrent writes at the same version win', async () => {
      const session = await ctx.backend.sessions.create({}, {});
      const results = await Promise.allSettled([
        ctx.backend.sessions.update(session.id, { status: 'suspended', expectedVersion: 1 }, {}),
        ctx.backend.sessions.update(session.id, { status: 'suspended', expectedVersion: 1 }, {}),
      ]);
      expect(results.filter((r) => r.status === 'fulfilled')).toHaveLength(1);
      const lost = results.find((r) => r.status === 'rejected');
      expect((lost as PromiseRejectedResult).reason).toMatchObject({ code: 'VERSION_CONFLICT' });
    });
  });
}
