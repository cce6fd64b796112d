import type { PendingRunInput } from '@cognition/contracts';
import { AIMessage, HumanMessage } from '@langchain/core/messages';
import type { SuiteContext } from '../context';
import {
  expectStorageError,
  expectValidationError,
  latestCheckpoint,
  putMessagesCheckpoint,
  uid,
} from '../helpers';

function pendingInput(content: string): PendingRunInput {
  return { messageId: uid('m'), content, parentId: null, metadata: { via: 'test' } };
}

/** A run of `sessionId` waiting behind the active one. */
async function pendingRun(ctx: SuiteContext, sessionId: string) {
  return (
    await ctx.backend.runs.create({ sessionId, status: 'pending', pendingInput: pendingInput('q') })
  ).run;
}

/** Pending runs (double-texting) and `rollbackRun`. */
export function multitaskTests(ctx: SuiteContext): void {
  describe('pending runs (double-texting)', () => {
    it('stores a pending run beside the active one, with its input, strategy and callback', async () => {
      const session = await ctx.backend.sessions.create({}, {});
      const { run: active } = await ctx.backend.runs.create({ sessionId: session.id });
      const input = pendingInput('second question');
      const { run: pending } = await ctx.backend.runs.create({
        sessionId: session.id,
        status: 'pending',
        multitaskStrategy: 'enqueue',
        supersedesRunId: active.id,
        callbackUrl: 'https://example.com/hook',
        pendingInput: input,
      });
      expect(pending).toMatchObject({
        status: 'pending',
        inputMessageId: null,
        multitaskStrategy: 'enqueue',
        supersedesRunId: active.id,
        callbackUrl: 'https://example.com/hook',
      });
      expect(await ctx.backend.runs.getActive(session.id)).toEqual(active);
      expect(await ctx.backend.runs.listActive()).toEqual([active]);
      expect(await ctx.backend.runs.pendingInput(pending.id)).toEqual(input);
      expect(await ctx.backend.runs.pendingInput(active.id)).toBeNull();
      expect(await ctx.backend.runs.pendingInput(uid('missing'))).toBeNull();
    });

    it('keeps the client tools of a run input, and sets and removes its callback URL', async () => {
      const session = await ctx.backend.sessions.create({}, {});
      const input: PendingRunInput = {
        ...pendingInput('with tools'),
        clientTools: [
          {
            name: 'get_weather',
            description: 'Asks the browser',
            parameters: { type: 'object', properties: { city: { type: 'string' } } },
          },
        ],
      };
      const { run } = await ctx.backend.runs.create({ sessionId: session.id, pendingInput: input });
      expect(await ctx.backend.runs.pendingInput(run.id)).toEqual(input);
      const set = await ctx.backend.runs.update(run.id, { callbackUrl: 'https://example.com/a2a' });
      expect(set.callbackUrl).toBe('https://example.com/a2a');
      expect((await ctx.backend.runs.get(run.id))?.callbackUrl).toBe('https://example.com/a2a');
      const removed = await ctx.backend.runs.update(run.id, { callbackUrl: null });
      expect(removed).toMatchObject({ callbackUrl: null, status: run.status });
    });

    it('keeps how an A2A push notification config wants the callback, set at creation or later', async () => {
      const session = await ctx.backend.sessions.create({}, {});
      const config = {
        a2aVersion: '0.3' as const,
        token: 'tok-é',
        authentication: { scheme: 'Bearer', credentials: 'secret 😀' },
      };
      const { run } = await ctx.backend.runs.create({
        sessionId: session.id,
        callbackUrl: 'https://example.com/a2a',
        callbackConfig: config,
      });
      expect(run.callbackConfig).toEqual(config);
      expect((await ctx.backend.runs.get(run.id))?.callbackConfig).toEqual(config);
      const other = { a2aVersion: '1.0' as const, token: '', authentication: null };
      expect(
        (await ctx.backend.runs.update(run.id, { callbackConfig: other })).callbackConfig,
      ).toEqual(other);
      // A patch without it keeps it; null removes it.
      expect((await ctx.backend.runs.update(run.id, { status: 'running' })).callbackConfig).toEqual(
        other,
      );
      await ctx.backend.runs.update(run.id, { callbackConfig: null });
      expect((await ctx.backend.runs.list(session.id))[0]?.callbackConfig).toBeNull();
      const { run: plain } = await ctx.backend.runs.create({
        sessionId: (await ctx.backend.sessions.create({}, {})).id,
      });
      expect(plain.callbackConfig).toBeNull();
      await expectValidationError(
        ctx.backend.runs.update(run.id, {
          callbackConfig: { ...config, a2aVersion: '2.0' as '1.0' },
        }),
        'callbackConfig.a2aVersion',
      );
    });

    it('refuses a pending run without its input, naming the field', async () => {
      const session = await ctx.backend.sessions.create({}, {});
      await expectValidationError(
        ctx.backend.runs.create({ sessionId: session.id, status: 'pending' }),
        'pendingInput',
      );
    });

    it('lists pending runs oldest first, per session or across sessions', async () => {
      const a = await ctx.backend.sessions.create({}, {});
      const b = await ctx.backend.sessions.create({}, {});
      const make = (sessionId: string) => pendingRun(ctx, sessionId);
      const a1 = await make(a.id);
      const b1 = await make(b.id);
      const a2 = await make(a.id);
      expect((await ctx.backend.runs.listPending(a.id)).map((r) => r.id)).toEqual([a1.id, a2.id]);
      expect((await ctx.backend.runs.listPending()).map((r) => r.id)).toEqual([
        a1.id,
        b1.id,
        a2.id,
      ]);
    });

    it('reads the active run and the pending ones of a session at once, as getActive and listPending do', async () => {
      const a = await ctx.backend.sessions.create({}, {});
      const b = await ctx.backend.sessions.create({}, {});
      expect(await ctx.backend.runs.getActiveAndPending(a.id)).toEqual({
        active: null,
        pending: [],
      });
      const make = (sessionId: string) => pendingRun(ctx, sessionId);
      const a1 = await make(a.id);
      await make(b.id);
      const a2 = await make(a.id);
      const { run: done } = await ctx.backend.runs.create({ sessionId: a.id });
      await ctx.backend.runs.update(done.id, { status: 'completed', finishedAt: new Date() });
      const { run: active } = await ctx.backend.runs.create({ sessionId: a.id });
      await ctx.backend.runs.create({ sessionId: b.id });
      const both = await ctx.backend.runs.getActiveAndPending(a.id);
      expect(both).toEqual({
        active: await ctx.backend.runs.getActive(a.id),
        pending: await ctx.backend.runs.listPending(a.id),
      });
      expect(both.active?.id).toBe(active.id);
      expect(both.pending.map((r) => r.id)).toEqual([a1.id, a2.id]);
    });

    it('promotes a pending run only when no other run is active, keeping its input', async () => {
      const session = await ctx.backend.sessions.create({}, {});
      const { run: active } = await ctx.backend.runs.create({ sessionId: session.id });
      const input = pendingInput('next');
      const { run: pending } = await ctx.backend.runs.create({
        sessionId: session.id,
        status: 'pending',
        pendingInput: input,
      });
      await expectStorageError(ctx.backend.runs.promote(pending.id), 'RUN_IN_PROGRESS');
      await ctx.backend.runs.update(active.id, { status: 'completed' });
      const promoted = await ctx.backend.runs.promote(pending.id);
      expect(promoted).toMatchObject({ status: 'queued', inputMessageId: input.messageId });
      expect(await ctx.backend.runs.getActive(session.id)).toEqual(promoted);
      expect(await ctx.backend.runs.listPending(session.id)).toEqual([]);
      expect(await ctx.backend.runs.pendingInput(pending.id)).toEqual(input);
      await expectStorageError(ctx.backend.runs.promote(pending.id), 'CONFLICT');
      await expectStorageError(ctx.backend.runs.promote(uid('missing')), 'RUN_NOT_FOUND');
    });

    it("keeps a delayed run's start time, and refuses one on a run that is not pending", async () => {
      const session = await ctx.backend.sessions.create({}, {});
      const startAfter = new Date(Date.now() + 60_000);
      const { run } = await ctx.backend.runs.create({
        sessionId: session.id,
        status: 'pending',
        pendingInput: pendingInput('later'),
        startAfter,
      });
      expect(run.startAfter?.getTime()).toBe(startAfter.getTime());
      expect((await ctx.backend.runs.get(run.id))?.startAfter?.getTime()).toBe(
        startAfter.getTime(),
      );
      const [listed] = await ctx.backend.runs.listPending(session.id);
      expect(listed?.startAfter?.getTime()).toBe(startAfter.getTime());
      const { run: plain } = await ctx.backend.runs.create({ sessionId: session.id });
      expect(plain.startAfter).toBeNull();
      await expect(
        ctx.backend.runs.create({ sessionId: session.id, status: 'queued', startAfter }),
      ).rejects.toMatchObject({ code: 'VALIDATION_ERROR' });
    });

    it('cancels a pending run that never started, and only while it is pending', async () => {
      const session = await ctx.backend.sessions.create({}, {});
      const { run: active } = await ctx.backend.runs.create({ sessionId: session.id });
      const [first, second] = [
        await pendingRun(ctx, session.id),
        await pendingRun(ctx, session.id),
      ];
      const at = new Date();
      const cancelled = await ctx.backend.runs.cancelPending(first.id, at);
      expect(cancelled).toMatchObject({ id: first.id, status: 'aborted', inputMessageId: null });
      expect(cancelled?.finishedAt?.getTime()).toBe(at.getTime());
      expect(await ctx.backend.runs.get(first.id)).toEqual(cancelled);
      expect((await ctx.backend.runs.listPending(session.id)).map((r) => r.id)).toEqual([
        second.id,
      ]);
      expect((await ctx.backend.usage.totals([session.id])).get(session.id)?.abortedCount).toBe(1);
      // Ended: neither cancelled again nor started.
      expect(await ctx.backend.runs.cancelPending(first.id, new Date())).toBeNull();
      await expectStorageError(ctx.backend.runs.promote(first.id), 'CONFLICT');
      // An active run is not pending: the cancel leaves it alone.
      expect(await ctx.backend.runs.cancelPending(active.id, new Date())).toBeNull();
      expect((await ctx.backend.runs.get(active.id))?.status).toBe('queued');
      await expectStorageError(
        ctx.backend.runs.cancelPending(uid('missing'), new Date()),
        'RUN_NOT_FOUND',
      );
      // A cancel racing a start: exactly one of them wins.
      await ctx.backend.runs.update(active.id, { status: 'completed', finishedAt: new Date() });
      const [promoted, cancel] = await Promise.allSettled([
        ctx.backend.runs.promote(second.id),
        ctx.backend.runs.cancelPending(second.id, new Date()),
      ]);
      const started = promoted.status === 'fulfilled';
      const ended = cancel.status === 'fulfilled' && cancel.value !== null;
      expect(started).not.toBe(ended);
      expect((await ctx.backend.runs.get(second.id))?.status).toBe(started ? 'queued' : 'aborted');
    });

    it('lets exactly one of two pending runs of a session win concurrent promotes', async () => {
      const session = await ctx.backend.sessions.create({}, {});
      const [first, second] = [
        await pendingRun(ctx, session.id),
        await pendingRun(ctx, session.id),
      ];
      const results = await Promise.allSettled([
        ctx.backend.runs.promote(first.id),
        ctx.backend.runs.promote(second.id),
      ]);
      expect(results.filter((r) => r.status === 'fulfilled')).toHaveLength(1);
      expect(await ctx.backend.runs.listPending(session.id)).toHaveLength(1);
    });
  });

  describe('rollbackRun', () => {
    it('removes the run, its user message and what followed, and the checkpoints it added', async () => {
      const session = await ctx.backend.sessions.create({}, {});
      const first = [
        new HumanMessage({ id: uid('h'), content: 'first' }),
        new AIMessage({ id: uid('a'), content: 'first answer' }),
      ];
      const base = await putMessagesCheckpoint(ctx.backend, session.threadId, first);
      const question = await ctx.backend.messages.create({
        sessionId: session.id,
        role: 'user',
        content: 'second',
      });
      const { run } = await ctx.backend.runs.create({
        sessionId: session.id,
        inputMessageId: question.id,
      });
      await ctx.backend.runs.update(run.id, {
        status: 'running',
        startedAt: new Date(),
        baseCheckpointId: base,
      });
      const second = [
        ...first,
        new HumanMessage({ id: question.id, content: 'second' }),
        new AIMessage({ id: uid('a'), content: 'partial second answer' }),
      ];
      await putMessagesCheckpoint(ctx.backend, session.threadId, second.slice(0, 3));
      await putMessagesCheckpoint(ctx.backend, session.threadId, second);
      await ctx.backend.runs.recordCallbackAttempt({
        runId: run.id,
        deliveryId: uid('d'),
        url: 'https://example.com/hook',
        attempt: 1,
        startedAt: new Date(),
        durationMs: 1,
        status: 503,
        ok: false,
        error: null,
      });
      expect((await ctx.backend.messages.listAll(session.id, {})).length).toBe(4);

      const result = await ctx.backend.rollbackRun(run.id);

      expect(result).toEqual({ messages: 2, checkpoints: 2 });
      const rows = await ctx.backend.messages.listAll(session.id, {});
      expect(rows.map((m) => m.content)).toEqual(['first', 'first answer']);
      expect((await ctx.backend.sessions.get(session.id, {}))?.messageCount).toBe(2);
      expect((await latestCheckpoint(ctx.backend, session.threadId))?.checkpoint.id).toBe(base);
      expect(await ctx.backend.runs.get(run.id)).toBeNull();
      expect(await ctx.backend.runs.listCallbackAttempts(run.id)).toEqual([]);
      expect(await ctx.backend.runs.getActive(session.id)).toBeNull();
      // The projection agrees with the checkpoint it now stands on.
      await ctx.backend.rebuildMessageProjection(session.id);
      expect((await ctx.backend.messages.listAll(session.id, {})).map((m) => m.content)).toEqual([
        'first',
        'first answer',
      ]);
    });

    it('leaves the thread alone for a run that never started', async () => {
      const session = await ctx.backend.sessions.create({}, {});
      const base = await putMessagesCheckpoint(ctx.backend, session.threadId, [
        new HumanMessage({ id: uid('h'), content: 'kept' }),
      ]);
      const question = await ctx.backend.messages.create({
        sessionId: session.id,
        role: 'user',
        content: 'never answered',
      });
      const { run } = await ctx.backend.runs.create({
        sessionId: session.id,
        inputMessageId: question.id,
      });
      expect(await ctx.backend.rollbackRun(run.id)).toEqual({ messages: 1, checkpoints: 0 });
      expect((await latestCheckpoint(ctx.backend, session.threadId))?.checkpoint.id).toBe(base);
      expect((await ctx.backend.messages.listAll(session.id, {})).map((m) => m.content)).toEqual([
        'kept',
      ]);
    });

    it('removes every checkpoint of a run that started on an empty thread', async () => {
      const session = await ctx.backend.sessions.create({}, {});
      const question = await ctx.backend.messages.create({
        sessionId: session.id,
        role: 'user',
        content: 'first ever',
      });
      const { run } = await ctx.backend.runs.create({
        sessionId: session.id,
        inputMessageId: question.id,
      });
      await ctx.backend.runs.update(run.id, { status: 'running', startedAt: new Date() });
      await putMessagesCheckpoint(ctx.backend, session.threadId, [
        new HumanMessage({ id: question.id, content: 'first ever' }),
      ]);
      expect(await ctx.backend.rollbackRun(run.id)).toEqual({ messages: 1, checkpoints: 1 });
      expect(await latestCheckpoint(ctx.backend, session.threadId)).toBeUndefined();
      expect((await ctx.backend.sessions.get(session.id, {}))?.messageCount).toBe(0);
    });

    it('answers RUN_NOT_FOUND for an unknown run', async () => {
      await expectStorageError(ctx.backend.rollbackRun(uid('missing')), 'RUN_NOT_FOUND');
    });
  });
}
