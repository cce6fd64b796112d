import { PAGE_LIMIT_MAX } from '@cognition/contracts';
import type { SuiteContext } from '../context';
import {
  expectStorageError,
  expectStorageErrorValue,
  expectValidationError,
  sleep,
  uid,
} from '../helpers';

export function sessionTests(ctx: SuiteContext): void {
  describe('sessions', () => {
    it('creates an active session at version 1 with its own thread id and defaults', async () => {
      const scope = { user: 'alice' };
      const session = await ctx.backend.sessions.create({}, scope);
      expect(session).toMatchObject({
        status: 'active',
        version: 1,
        title: null,
        agentName: 'default',
        config: {},
        metadata: {},
        scopes: scope,
        messageCount: 0,
        parentId: null,
        workspacePath: null,
      });
      expect(session.id).toEqual(expect.any(String));
      expect(session.threadId).toEqual(expect.any(String));
      expect(session.threadId).not.toBe(session.id);
      expect(session.createdAt).toBeInstanceOf(Date);
      expect(session.updatedAt).toBeInstanceOf(Date);
      expect(await ctx.backend.sessions.get(session.id, scope)).toEqual(session);
    });

    it('creates a session with every optional field and reads it back unchanged', async () => {
      const parent = await ctx.backend.sessions.create({}, {});
      const id = uid('session');
      const session = await ctx.backend.sessions.create(
        {
          id,
          title: 'Planning 計画 🚀',
          agentName: 'researcher_2',
          config: { providerId: 'openai', model: 'gpt-4o', temperature: 0.3, maxTokens: 2048 },
          metadata: { ticket: 'T-1', lang: 'ja' },
          parentId: parent.id,
          workspacePath: '/workspaces/p1',
        },
        { user: 'alice', project: 'p1' },
      );
      expect(session).toMatchObject({
        id,
        title: 'Planning 計画 🚀',
        agentName: 'researcher_2',
        config: { providerId: 'openai', model: 'gpt-4o', temperature: 0.3, maxTokens: 2048 },
        metadata: { ticket: 'T-1', lang: 'ja' },
        scopes: { user: 'alice', project: 'p1' },
        parentId: parent.id,
        workspacePath: '/workspaces/p1',
      });
      expect(await ctx.backend.sessions.get(id, {})).toEqual(session);
    });

    it('rejects a second session with an existing id as CONFLICT', async () => {
      const id = uid('session');
      await ctx.backend.sessions.create({ id, title: 'first' }, {});
      await expectStorageError(
        ctx.backend.sessions.create({ id, title: 'second' }, {}),
        'CONFLICT',
      );
      expect((await ctx.backend.sessions.get(id, {}))?.title).toBe('first');
    });

    it('returns null for a missing session and for one outside the caller scope', async () => {
      const session = await ctx.backend.sessions.create({}, { user: 'alice', project: 'p1' });
      expect(await ctx.backend.sessions.get(uid('missing'), {})).toBeNull();
      expect(await ctx.backend.sessions.get(session.id, { user: 'bob' })).toBeNull();
      expect(
        await ctx.backend.sessions.get(session.id, { user: 'alice', project: 'p2' }),
      ).toBeNull();
      expect(await ctx.backend.sessions.get(session.id, { team: 'x' })).toBeNull();
      expect(await ctx.backend.sessions.get(session.id, { user: 'alice' })).not.toBeNull();
      expect(await ctx.backend.sessions.get(session.id, {})).not.toBeNull();
    });

    it('lists only sessions whose scopes match every key of the caller scope', async () => {
      const a1 = await ctx.backend.sessions.create(
        { title: 'a1' },
        { user: 'alice', project: 'p1' },
      );
      const a2 = await ctx.backend.sessions.create(
        { title: 'a2' },
        { user: 'alice', project: 'p2' },
      );
      const b1 = await ctx.backend.sessions.create({ title: 'b1' }, { user: 'bob', project: 'p1' });
      const open = await ctx.backend.sessions.create({ title: 'open' }, {});
      const ids = async (scope: Record<string, string>): Promise<string[]> =>
        (await ctx.backend.sessions.list({}, scope)).sessions.map((s) => s.id).sort();
      expect(await ids({ user: 'alice' })).toEqual([a1.id, a2.id].sort());
      expect(await ids({ user: 'alice', project: 'p1' })).toEqual([a1.id]);
      expect(await ids({ project: 'p1' })).toEqual([a1.id, b1.id].sort());
      expect(await ids({ user: 'carol' })).toEqual([]);
      expect(await ids({ team: 'x' })).toEqual([]);
      expect(await ids({})).toEqual([a1.id, a2.id, b1.id, open.id].sort());
      expect((await ctx.backend.sessions.list({}, { user: 'alice' })).total).toBe(2);
    });

    it('filters by metadata predicates (all must match) and by status', async () => {
      const s1 = await ctx.backend.sessions.create({ metadata: { env: 'prod', team: 'core' } }, {});
      const s2 = await ctx.backend.sessions.create({ metadata: { env: 'prod', team: 'web' } }, {});
      const s3 = await ctx.backend.sessions.create({ metadata: { env: 'dev' } }, {});
      await ctx.backend.sessions.update(s2.id, { status: 'completed' }, {});
      const list = async (
        query: Parameters<typeof ctx.backend.sessions.list>[0],
      ): Promise<string[]> =>
        (await ctx.backend.sessions.list(query, {})).sessions.map((s) => s.id).sort();
      expect(await list({ metadata: { env: 'prod' } })).toEqual([s1.id, s2.id].sort());
      expect(await list({ metadata: { env: 'prod', team: 'core' } })).toEqual([s1.id]);
      expect(await list({ metadata: { env: 'prod', team: 'none' } })).toEqual([]);
      expect(await list({ metadata: { missing: 'x' } })).toEqual([]);
      expect(await list({ status: 'active' })).toEqual([s1.id, s3.id].sort());
      expect(await list({ status: 'completed', metadata: { env: 'prod' } })).toEqual([s2.id]);
      expect((await ctx.backend.sessions.list({ status: 'active' }, {})).total).toBe(2);
    });

    it('orders sessions by newest updatedAt first', async () => {
      const first = await ctx.backend.sessions.create({ title: 'first' }, {});
      await sleep(5);
      const second = await ctx.backend.sessions.create({ title: 'second' }, {});
      await sleep(5);
      const third = await ctx.backend.sessions.create({ title: 'third' }, {});
      let page = await ctx.backend.sessions.list({}, {});
      expect(page.sessions.map((s) => s.id)).toEqual([third.id, second.id, first.id]);
      await sleep(5);
      await ctx.backend.sessions.update(first.id, { title: 'touched' }, {});
      page = await ctx.backend.sessions.list({}, {});
      expect(page.sessions.map((s) => s.id)).toEqual([first.id, third.id, second.id]);
    });

    it('paginates with a total, and an offset past the end gives an empty page', async () => {
      const created: string[] = [];
      for (let i = 0; i < 5; i += 1) {
        created.push((await ctx.backend.sessions.create({ title: `s${i}` }, { user: 'u' })).id);
      }
      await ctx.backend.sessions.create({ title: 'other tenant' }, { user: 'v' });
      const scope = { user: 'u' };
      const p1 = await ctx.backend.sessions.list({ limit: 2, offset: 0 }, scope);
      const p2 = await ctx.backend.sessions.list({ limit: 2, offset: 2 }, scope);
      const p3 = await ctx.backend.sessions.list({ limit: 2, offset: 4 }, scope);
      expect([p1.total, p2.total, p3.total]).toEqual([5, 5, 5]);
      expect([p1.sessions.length, p2.sessions.length, p3.sessions.length]).toEqual([2, 2, 1]);
      const seen = [...p1.sessions, ...p2.sessions, ...p3.sessions].map((s) => s.id);
      expect(seen.sort()).toEqual([...created].sort());
      const past = await ctx.backend.sessions.list({ limit: 2, offset: 50 }, scope);
      expect(past).toEqual({ sessions: [], total: 5 });
      expect(
        (await ctx.backend.sessions.list({ limit: PAGE_LIMIT_MAX }, scope)).sessions,
      ).toHaveLength(5);
    });

    it('rejects limit 0, limit above PAGE_LIMIT_MAX, negative offsets and unknown fields', async () => {
      await expectValidationError(ctx.backend.sessions.list({ limit: 0 }, {}), 'limit');
      await expectValidationError(
        ctx.backend.sessions.list({ limit: PAGE_LIMIT_MAX + 1 }, {}),
        'limit',
      );
      await expectValidationError(ctx.backend.sessions.list({ offset: -1 }, {}), 'offset');
      await expectStorageError(
        ctx.backend.sessions.list({ sortBy: 'title' } as unknown as { limit: number }, {}),
        'VALIDATION_ERROR',
      );
    });

    it('updates title, status, config, agentName and metadata, replacing metadata and config whole', async () => {
      const created = await ctx.backend.sessions.create(
        {
          title: 'draft',
          config: { model: 'a', temperature: 1 },
          metadata: { keep: 'no', drop: 'yes' },
        },
        { user: 'alice' },
      );
      await sleep(5);
      const updated = await ctx.backend.sessions.update(
        created.id,
        {
          title: 'final',
          status: 'suspended',
          agentName: 'writer',
          config: { maxTokens: 10 },
          metadata: { fresh: 'only' },
        },
        { user: 'alice' },
      );
      expect(updated).toMatchObject({
        id: created.id,
        threadId: created.threadId,
        title: 'final',
        status: 'suspended',
        agentName: 'writer',
        config: { maxTokens: 10 },
        metadata: { fresh: 'only' },
        scopes: { user: 'alice' },
        version: 2,
      });
      expect(updated.createdAt.getTime()).toBe(created.createdAt.getTime());
      expect(updated.updatedAt.getTime()).toBeGreaterThan(created.updatedAt.getTime());
      expect(await ctx.backend.sessions.get(created.id, {})).toEqual(updated);
      const cleared = await ctx.backend.sessions.update(created.id, { title: null }, {});
      expect(cleared).toMatchObject({ title: null, version: 3, status: 'suspended' });
      const partial = await ctx.backend.sessions.update(created.id, { status: 'active' }, {});
      expect(partial).toMatchObject({
        version: 4,
        config: { maxTokens: 10 },
        metadata: { fresh: 'only' },
      });
    });

    it('applies a write stating the current version and rejects a stale one with VERSION_CONFLICT', async () => {
      const session = await ctx.backend.sessions.create({ title: 'v1' }, {});
      const v2 = await ctx.backend.sessions.update(
        session.id,
        { title: 'v2', expectedVersion: 1 },
        {},
      );
      expect(v2.version).toBe(2);
      await expectStorageError(
        ctx.backend.sessions.update(session.id, { title: 'stale', expectedVersion: 1 }, {}),
        'VERSION_CONFLICT',
      );
      expect(await ctx.backend.sessions.get(session.id, {})).toEqual(v2);
    });

    it('lets exactly one of two concurrent writers at the same version win', async () => {
      const session = await ctx.backend.sessions.create({ title: 'base' }, {});
      const results = await Promise.allSettled([
        ctx.backend.sessions.update(session.id, { title: 'writer A', expectedVersion: 1 }, {}),
        ctx.backend.sessions.update(session.id, { title: 'writer B', expectedVersion: 1 }, {}),
      ]);
      const won = results.filter((r) => r.status === 'fulfilled');
      const lost = results.filter((r): r is PromiseRejectedResult => r.status === 'rejected');
      expect(won).toHaveLength(1);
      expect(lost).toHaveLength(1);
      expectStorageErrorValue(lost[0]?.reason, 'VERSION_CONFLICT');
      const stored = await ctx.backend.sessions.get(session.id, {});
      expect(stored?.version).toBe(2);
      expect(stored?.title).toBe((won[0] as PromiseFulfilledResult<{ title: string }>).value.title);
    });

    it('increments the version once per write under concurrent unconditional writers', async () => {
      const session = await ctx.backend.sessions.create({}, {});
      await Promise.all(
        Array.from({ length: 10 }, (_, i) =>
          ctx.backend.sessions.update(session.id, { title: `t${i}` }, {}),
        ),
      );
      expect((await ctx.backend.sessions.get(session.id, {}))?.version).toBe(11);
    });

    it('treats a session outside the caller scope as missing on update and delete', async () => {
      const session = await ctx.backend.sessions.create({ title: 'mine' }, { user: 'alice' });
      await expectStorageError(
        ctx.backend.sessions.update(session.id, { title: 'hijack' }, { user: 'bob' }),
        'SESSION_NOT_FOUND',
      );
      await expectStorageError(
        ctx.backend.sessions.update(uid('missing'), { title: 'x' }, {}),
        'SESSION_NOT_FOUND',
      );
      expect(await ctx.backend.sessions.delete(session.id, { user: 'bob' })).toBe(false);
      expect(await ctx.backend.sessions.get(session.id, {})).toEqual(session);
    });

    it('deletes a session once', async () => {
      const session = await ctx.backend.sessions.create({}, { user: 'alice' });
      expect(await ctx.backend.sessions.delete(session.id, { user: 'alice' })).toBe(true);
      expect(await ctx.backend.sessions.get(session.id, {})).toBeNull();
      expect(await ctx.backend.sessions.delete(session.id, { user: 'alice' })).toBe(false);
      expect(await ctx.backend.sessions.delete(uid('missing'), {})).toBe(false);
      expect((await ctx.backend.sessions.list({}, {})).total).toBe(0);
    });

    it('adjusts messageCount atomically under concurrent callers', async () => {
      const session = await ctx.backend.sessions.create({}, {});
      const counts = await Promise.all(
        Array.from({ length: 20 }, () => ctx.backend.sessions.updateMessageCount(session.id, 1)),
      );
      expect([...counts].sort((a, b) => a - b)).toEqual(
        Array.from({ length: 20 }, (_, i) => i + 1),
      );
      expect(await ctx.backend.sessions.updateMessageCount(session.id, -5)).toBe(15);
      expect((await ctx.backend.sessions.get(session.id, {}))?.messageCount).toBe(15);
      await expectStorageError(
        ctx.backend.sessions.updateMessageCount(uid('missing'), 1),
        'SESSION_NOT_FOUND',
      );
    });

    it('rejects invalid create input with field issues and stores nothing', async () => {
      const create = (input: unknown) =>
        ctx.backend.sessions.create(input as Parameters<typeof ctx.backend.sessions.create>[0], {});
      await expectValidationError(create({ title: 'x'.repeat(201) }), 'title');
      await expectValidationError(create({ title: 42 }), 'title');
      await expectValidationError(create({ titel: 'typo' }), '(root)');
      await expectValidationError(create({ agentName: 'bad name!' }), 'agentName');
      await expectValidationError(create({ config: { temperature: 5 } }), 'config.temperature');
      await expectValidationError(create({ config: { unknown: true } }), 'config');
      await expectValidationError(create({ metadata: { n: 1 } }), 'metadata.n');
      await expectValidationError(create({ id: '' }), 'id');
      await expectStorageError(create(null), 'VALIDATION_ERROR');
      await expectStorageError(
        ctx.backend.sessions.create({}, { user: 5 } as unknown as Record<string, string>),
        'VALIDATION_ERROR',
      );
      expect((await ctx.backend.sessions.list({}, {})).total).toBe(0);
    });

    it('rejects invalid update input with field issues and leaves the session unchanged', async () => {
      const session = await ctx.backend.sessions.create({ title: 'ok' }, {});
      const update = (input: unknown) =>
        ctx.backend.sessions.update(
          session.id,
          input as Parameters<typeof ctx.backend.sessions.update>[1],
          {},
        );
      await expectValidationError(update({ title: 'y'.repeat(201) }), 'title');
      await expectValidationError(update({ status: 'bogus' }), 'status');
      await expectValidationError(update({ expectedVersion: 0 }), 'expectedVersion');
      await expectValidationError(update({ config: { maxTokens: 0 } }), 'config.maxTokens');
      await expectValidationError(update({ metadata: { k: ['array'] } }), 'metadata.k');
      await expectValidationError(update({ scopes: { user: 'me' } }), '(root)');
      expect(await ctx.backend.sessions.get(session.id, {})).toEqual(session);
    });
  });
}
