import { EMPTY_SESSION_USAGE } from '@cognition/contracts';
import { describeError, toHttpError } from '../../errors';
import type { ApiTestBed } from '../../testing/test-bed';
import { createApiTestBed, trpcErrorOf } from '../../testing/test-bed';

const ALICE = { user: 'alice', project: 'p1' };
const BOB = { user: 'bob', project: 'p1' };

describe('sessions router', () => {
  let bed: ApiTestBed;

  beforeEach(async () => {
    bed = await createApiTestBed();
  });

  afterEach(async () => {
    await bed.cleanup();
  });

  describe('create', () => {
    it('creates an active session at version 1 whose scopes are the caller scope', async () => {
      const session = await bed.as(ALICE).sessions.create({
        title: 'Plan',
        metadata: { ticket: 'T-1' },
        config: { model: 'gpt-4o', temperature: 0.3 },
      });
      expect(session).toMatchObject({
        title: 'Plan',
        status: 'active',
        agentName: 'default',
        scopes: ALICE,
        metadata: { ticket: 'T-1' },
        config: { model: 'gpt-4o', temperature: 0.3 },
        version: 1,
        messageCount: 0,
      });
      expect(session.createdAt).toBeInstanceOf(Date);
      // The API adds the usage totals (none yet) to what storage holds.
      const { usage, ...stored } = session;
      expect(usage).toEqual(EMPTY_SESSION_USAGE);
      expect(await bed.storage.sessions.get(session.id, ALICE)).toEqual(stored);
    });

    it('works with no input fields at all', async () => {
      const session = await bed.as().sessions.create({});
      expect(session).toMatchObject({
        title: null,
        agentName: 'default',
        scopes: {},
        metadata: {},
      });
    });

    it('rejects scopes, ids and unknown fields in the body (scopes come from the caller)', async () => {
      for (const body of [{ scopes: { user: 'mallory' } }, { id: 'chosen' }, { titel: 'typo' }]) {
        const error = await trpcErrorOf(bed.as(ALICE).sessions.create(body as never));
        expect(error.code).toBe('UNPROCESSABLE_CONTENT');
        expect(describeError(error).code).toBe('VALIDATION_ERROR');
      }
      expect((await bed.storage.sessions.list({}, {})).total).toBe(0);
    });

    it('names the offending field of a validation failure', async () => {
      const error = await trpcErrorOf(
        bed.as().sessions.create({ config: { temperature: 7 }, agentName: 'no spaces' }),
      );
      const { status, body } = toHttpError(error);
      expect(status).toBe(422);
      expect(body.code).toBe('VALIDATION_ERROR');
      expect(body.errors?.map((issue) => issue.path).sort()).toEqual([
        'agentName',
        'config.temperature',
      ]);
      expect(body.detail).toContain('config.temperature');
    });
  });

  describe('agent and LLM validation against the runtime', () => {
    const invalid: [Record<string, unknown>, string, string][] = [
      [{ agentName: 'nobody' }, 'agentName', 'unknown agent "nobody"'],
      [{ agentName: 'helper' }, 'agentName', 'subagent'],
      [{ config: { providerId: 'azure' } }, 'config.providerId', 'unknown provider "azure"'],
      [{ config: { model: 'claude-9' } }, 'config.model', 'no enabled provider serves'],
      [{ config: { providerId: 'fake', model: 'claude-9' } }, 'config.model', 'does not serve'],
    ];

    it('rejects at create with 422 naming the field, storing nothing', async () => {
      for (const [fields, path, text] of invalid) {
        const error = await trpcErrorOf(bed.as(ALICE).sessions.create(fields));
        const { status, body } = toHttpError(error);
        expect(status).toBe(422);
        expect(body.code).toBe('VALIDATION_ERROR');
        expect(body.errors?.map((issue) => issue.path)).toEqual([path]);
        expect(body.detail).toContain(text);
      }
      expect((await bed.storage.sessions.list({}, {})).total).toBe(0);
    });

    it('rejects at update with 422, leaving the session as it was', async () => {
      const created = await bed.as(ALICE).sessions.create({ agentName: 'researcher' });
      for (const [fields, path] of invalid) {
        const error = await trpcErrorOf(
          bed.as(ALICE).sessions.update({ id: created.id, ...fields }),
        );
        expect(toHttpError(error).status).toBe(422);
        expect(toHttpError(error).body.errors?.map((issue) => issue.path)).toEqual([path]);
      }
      expect(await bed.as(ALICE).sessions.get({ id: created.id })).toEqual({
        ...created,
        pendingAction: null,
      });
    });

    it('accepts agents and models the runtime can serve', async () => {
      const created = await bed.as(ALICE).sessions.create({
        agentName: 'readonly',
        config: { providerId: 'fake', model: 'gpt-4o' },
      });
      expect(created).toMatchObject({
        agentName: 'readonly',
        config: { providerId: 'fake', model: 'gpt-4o' },
      });
      const updated = await bed.as(ALICE).sessions.update({
        id: created.id,
        agentName: 'researcher',
        config: { model: 'fake-model' },
      });
      expect(updated).toMatchObject({ agentName: 'researcher', config: { model: 'fake-model' } });
    });
  });

  describe('get', () => {
    it('returns the session and 404s an unknown id with the id in the message', async () => {
      const created = await bed.as().sessions.create({ title: 'x' });
      // With, beside the session, the decision its run waits for (none).
      expect(await bed.as().sessions.get({ id: created.id })).toEqual({
        ...created,
        pendingAction: null,
      });

      const error = await trpcErrorOf(bed.as().sessions.get({ id: 'nope' }));
      expect(error.code).toBe('NOT_FOUND');
      expect(toHttpError(error)).toEqual({
        status: 404,
        body: { detail: 'Session not found: nope', code: 'SESSION_NOT_FOUND' },
      });
    });
  });

  describe('list', () => {
    it('pages newest first with a total, filtered by status and metadata', async () => {
      const caller = bed.as();
      const a = await caller.sessions.create({ title: 'a', metadata: { team: 'red' } });
      const b = await caller.sessions.create({ title: 'b', metadata: { team: 'blue' } });
      const c = await caller.sessions.create({ title: 'c', metadata: { team: 'red' } });
      await caller.sessions.update({ id: b.id, status: 'completed' });

      const all = await caller.sessions.list();
      expect(all.total).toBe(3);
      expect(all.sessions).toHaveLength(3);

      const firstPage = await caller.sessions.list({ limit: 2, offset: 0 });
      const secondPage = await caller.sessions.list({ limit: 2, offset: 2 });
      expect(firstPage.total).toBe(3);
      expect(firstPage.sessions).toHaveLength(2);
      expect(secondPage.sessions).toHaveLength(1);
      const paged = [...firstPage.sessions, ...secondPage.sessions].map((s) => s.id);
      expect(new Set(paged)).toEqual(new Set([a.id, b.id, c.id]));

      const red = await caller.sessions.list({ metadata: { team: 'red' } });
      expect(red.sessions.map((s) => s.id).sort()).toEqual([a.id, c.id].sort());
      const completed = await caller.sessions.list({ status: 'completed' });
      expect(completed.sessions.map((s) => s.id)).toEqual([b.id]);
    });

    it('rejects a limit above the maximum and unknown filters', async () => {
      const queries: unknown[] = [{ limit: 100_000 }, { limit: 0 }, { offset: -1 }, { owner: 'x' }];
      for (const query of queries) {
        const error = await trpcErrorOf(bed.as().sessions.list(query as never));
        expect(toHttpError(error).status).toBe(422);
      }
    });
  });

  describe('update', () => {
    it('applies the given fields and bumps the version', async () => {
      const created = await bed.as().sessions.create({ title: 'old', metadata: { a: '1' } });
      const updated = await bed.as().sessions.update({
        id: created.id,
        title: 'new',
        metadata: { b: '2' },
        status: 'suspended',
        agentName: 'researcher',
        config: { maxTokens: 100 },
      });
      expect(updated).toMatchObject({
        id: created.id,
        title: 'new',
        metadata: { b: '2' },
        status: 'suspended',
        agentName: 'researcher',
        config: { maxTokens: 100 },
        version: 2,
      });
    });

    it('rejects a stale expectedVersion with CONFLICT / VERSION_CONFLICT and keeps the winner', async () => {
      const created = await bed.as().sessions.create({ title: 'v1' });
      const winner = await bed
        .as()
        .sessions.update({ id: created.id, title: 'first', expectedVersion: 1 });
      expect(winner.version).toBe(2);

      const error = await trpcErrorOf(
        bed.as().sessions.update({ id: created.id, title: 'second', expectedVersion: 1 }),
      );
      expect(error.code).toBe('CONFLICT');
      expect(describeError(error).code).toBe('VERSION_CONFLICT');
      expect(toHttpError(error).status).toBe(409);
      expect(await bed.as().sessions.get({ id: created.id })).toMatchObject({
        title: 'first',
        version: 2,
      });

      const matching = await bed
        .as()
        .sessions.update({ id: created.id, title: 'third', expectedVersion: 2 });
      expect(matching.version).toBe(3);
    });

    it('404s an unknown session', async () => {
      const error = await trpcErrorOf(bed.as().sessions.update({ id: 'missing', title: 'x' }));
      expect(toHttpError(error)).toEqual({
        status: 404,
        body: { detail: 'Session not found: missing', code: 'SESSION_NOT_FOUND' },
      });
    });
  });

  describe('context', () => {
    it("returns the next call's context view of the session's agent and model", async () => {
      const session = await bed.as(ALICE).sessions.create({ agentName: 'researcher' });
      const view = await bed.as(ALICE).sessions.context({ id: session.id });
      expect(view).toMatchObject({
        session_id: session.id,
        agent: 'researcher',
        model: 'fake-model',
        strategy: 'summarize',
        thread_messages: 0,
        summary: null,
        compacted: null,
      });
      // The researcher's two tools are part of every call.
      expect(view.parts.tool_schemas).toBeGreaterThan(0);
      expect(view.parts.total).toBe(view.parts.system_prompt + view.parts.tool_schemas);
    });

    it('422s a malformed id, naming the field', async () => {
      const error = await trpcErrorOf(bed.as().sessions.context({ id: '' }));
      expect(toHttpError(error).status).toBe(422);
      expect(toHttpError(error).body.errors?.map((issue) => issue.path)).toEqual(['id']);
    });
  });

  describe('delete', () => {
    it('deletes the session and its messages, then 404s', async () => {
      const created = await bed.as().sessions.create({});
      await bed.storage.messages.create({ sessionId: created.id, role: 'user', content: 'hi' });

      expect(await bed.as().sessions.delete({ id: created.id })).toEqual({ deleted: true });
      expect(await bed.storage.sessions.get(created.id, {})).toBeNull();
      expect((await trpcErrorOf(bed.as().sessions.get({ id: created.id }))).code).toBe('NOT_FOUND');
      expect((await trpcErrorOf(bed.as().sessions.delete({ id: created.id }))).code).toBe(
        'NOT_FOUND',
      );
    });
  });

  describe('scope isolation', () => {
    it("treats another tenant's session exactly like a missing one on every procedure", async () => {
      const own = await bed.as(ALICE).sessions.create({ title: 'alice only' });
      const message = await bed.storage.messages.create({
        sessionId: own.id,
        role: 'assistant',
        content: 'reply',
      });

      const bob = bed.as(BOB);
      const attempts: Promise<unknown>[] = [
        bob.sessions.get({ id: own.id }),
        bob.sessions.update({ id: own.id, title: 'hijacked' }),
        bob.sessions.delete({ id: own.id }),
        bob.messages.list({ sessionId: own.id }),
        bob.messages.get({ sessionId: own.id, messageId: message.id }),
        bob.sessions.context({ id: own.id }),
      ];
      for (const attempt of attempts) {
        const error = await trpcErrorOf(attempt);
        expect(error.code).toBe('NOT_FOUND');
        expect(toHttpError(error).body.detail).toBe(`Session not found: ${own.id}`);
      }
      expect((await bob.sessions.list()).total).toBe(0);

      expect(await bed.as(ALICE).sessions.get({ id: own.id })).toMatchObject({
        title: 'alice only',
        version: 1,
      });
      expect((await bed.as(ALICE).sessions.list()).total).toBe(1);
      // A narrower caller scope (only `user`) still matches; the empty scope sees everything.
      expect((await bed.as({ user: 'alice' }).sessions.list()).total).toBe(1);
      expect((await bed.as().sessions.list()).total).toBe(1);
    });
  });
});
