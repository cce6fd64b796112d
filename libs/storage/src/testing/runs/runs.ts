import type { CallbackAttempt } from '@cognition/contracts';
import type { SuiteContext } from '../context';
import {
  expectStorageError,
  expectStorageErrorValue,
  expectValidationError,
  sleep,
  uid,
} from '../helpers';

export function runTests(ctx: SuiteContext): void {
  describe('runs', () => {
    it('creates a queued run and reads it through get, list, getActive and listActive', async () => {
      const session = await ctx.backend.sessions.create({}, {});
      const input = await ctx.backend.messages.create({
        sessionId: session.id,
        role: 'user',
        content: 'go',
      });
      const { run, created } = await ctx.backend.runs.create({
        sessionId: session.id,
        inputMessageId: input.id,
      });
      expect(created).toBe(true);
      expect(run).toMatchObject({
        sessionId: session.id,
        status: 'queued',
        inputMessageId: input.id,
        idempotencyKey: null,
        usage: null,
        error: null,
        startedAt: null,
        finishedAt: null,
      });
      expect(run.createdAt).toBeInstanceOf(Date);
      expect(run.updatedAt).toBeInstanceOf(Date);
      expect(await ctx.backend.runs.get(run.id)).toEqual(run);
      expect(await ctx.backend.runs.list(session.id)).toEqual([run]);
      expect(await ctx.backend.runs.getActive(session.id)).toEqual(run);
      expect(await ctx.backend.runs.listActive()).toEqual([run]);
      expect(await ctx.backend.runs.get(uid('missing'))).toBeNull();
    });

    it('rejects a run for a missing session', async () => {
      await expectStorageError(
        ctx.backend.runs.create({ sessionId: uid('missing') }),
        'SESSION_NOT_FOUND',
      );
    });

    it('lets exactly one of two concurrent creates on one session become active', async () => {
      const session = await ctx.backend.sessions.create({}, {});
      const results = await Promise.allSettled([
        ctx.backend.runs.create({ sessionId: session.id, status: 'running' }),
        ctx.backend.runs.create({ sessionId: session.id, status: 'queued' }),
      ]);
      const won = results.filter((r) => r.status === 'fulfilled');
      const lost = results.filter((r): r is PromiseRejectedResult => r.status === 'rejected');
      expect(won).toHaveLength(1);
      expect(lost).toHaveLength(1);
      expectStorageErrorValue(lost[0]?.reason, 'RUN_IN_PROGRESS');
      const active = await ctx.backend.runs.getActive(session.id);
      const winner = (won[0] as PromiseFulfilledResult<{ run: { id: string } }>).value.run;
      expect(active?.id).toBe(winner.id);
      expect(await ctx.backend.runs.list(session.id)).toHaveLength(1);
    });

    it('keeps one active run per session under many concurrent creates', async () => {
      const session = await ctx.backend.sessions.create({}, {});
      const results = await Promise.allSettled(
        Array.from({ length: 10 }, () => ctx.backend.runs.create({ sessionId: session.id })),
      );
      expect(results.filter((r) => r.status === 'fulfilled')).toHaveLength(1);
      expect(
        (await ctx.backend.runs.listActive()).filter((r) => r.sessionId === session.id),
      ).toHaveLength(1);
    });

    it('frees the slot when the active run finishes', async () => {
      const session = await ctx.backend.sessions.create({}, {});
      const { run: first } = await ctx.backend.runs.create({ sessionId: session.id });
      await expectStorageError(
        ctx.backend.runs.create({ sessionId: session.id }),
        'RUN_IN_PROGRESS',
      );
      const startedAt = new Date();
      const running = await ctx.backend.runs.update(first.id, { status: 'running', startedAt });
      expect(running.status).toBe('running');
      expect(running.startedAt?.getTime()).toBe(startedAt.getTime());
      await expectStorageError(
        ctx.backend.runs.create({ sessionId: session.id }),
        'RUN_IN_PROGRESS',
      );
      await ctx.backend.runs.update(first.id, { status: 'completed', finishedAt: new Date() });
      expect(await ctx.backend.runs.getActive(session.id)).toBeNull();
      const { run: second, created } = await ctx.backend.runs.create({ sessionId: session.id });
      expect(created).toBe(true);
      expect((await ctx.backend.runs.getActive(session.id))?.id).toBe(second.id);
    });

    it('refuses to re-activate a finished run while another run is active', async () => {
      const session = await ctx.backend.sessions.create({}, {});
      const { run: first } = await ctx.backend.runs.create({ sessionId: session.id });
      await ctx.backend.runs.update(first.id, { status: 'failed' });
      const { run: second } = await ctx.backend.runs.create({ sessionId: session.id });
      await expectStorageError(
        ctx.backend.runs.update(first.id, { status: 'running' }),
        'RUN_IN_PROGRESS',
      );
      expect((await ctx.backend.runs.get(first.id))?.status).toBe('failed');
      expect((await ctx.backend.runs.getActive(session.id))?.id).toBe(second.id);
    });

    it('returns the first run with created: false for a repeated idempotency key', async () => {
      const session = await ctx.backend.sessions.create({}, {});
      const other = await ctx.backend.sessions.create({}, {});
      const first = await ctx.backend.runs.create({
        sessionId: session.id,
        idempotencyKey: 'key-1',
      });
      expect(first.created).toBe(true);
      expect(first.run.idempotencyKey).toBe('key-1');
      const again = await ctx.backend.runs.create({
        sessionId: session.id,
        idempotencyKey: 'key-1',
      });
      expect(again).toEqual({ run: first.run, created: false });
      await ctx.backend.runs.update(first.run.id, { status: 'completed' });
      const afterFinish = await ctx.backend.runs.create({
        sessionId: session.id,
        idempotencyKey: 'key-1',
      });
      expect(afterFinish.created).toBe(false);
      expect(afterFinish.run.id).toBe(first.run.id);
      expect(afterFinish.run.status).toBe('completed');
      const elsewhere = await ctx.backend.runs.create({
        sessionId: other.id,
        idempotencyKey: 'key-1',
      });
      expect(elsewhere.created).toBe(true);
      expect(elsewhere.run.id).not.toBe(first.run.id);
      expect(await ctx.backend.runs.list(session.id)).toHaveLength(1);
    });

    it('returns one run for concurrent creates with the same idempotency key', async () => {
      const session = await ctx.backend.sessions.create({}, {});
      const results = await Promise.all(
        Array.from({ length: 5 }, () =>
          ctx.backend.runs.create({ sessionId: session.id, idempotencyKey: 'same' }),
        ),
      );
      expect(new Set(results.map((r) => r.run.id)).size).toBe(1);
      expect(results.filter((r) => r.created)).toHaveLength(1);
    });

    it('updates status, usage, error and timestamps', async () => {
      const session = await ctx.backend.sessions.create({}, {});
      const { run } = await ctx.backend.runs.create({ sessionId: session.id, status: 'running' });
      await sleep(5);
      const usage = {
        inputTokens: 10,
        outputTokens: 5,
        costUsd: null,
        model: 'gpt-4o',
        provider: 'openai',
        estimated: false,
      };
      const error = { code: 'PROVIDER_ERROR' as const, message: 'upstream 502' };
      const finishedAt = new Date();
      const updated = await ctx.backend.runs.update(run.id, {
        status: 'failed',
        usage,
        error,
        finishedAt,
      });
      expect(updated).toMatchObject({ id: run.id, status: 'failed', usage, error });
      expect(updated.finishedAt?.getTime()).toBe(finishedAt.getTime());
      expect(updated.updatedAt.getTime()).toBeGreaterThan(run.updatedAt.getTime());
      expect(await ctx.backend.runs.get(run.id)).toEqual(updated);
      const cleared = await ctx.backend.runs.update(run.id, { error: null });
      expect(cleared.error).toBeNull();
      expect(cleared.usage).toEqual(usage);
    });

    it('rejects updates of missing runs and invalid run input', async () => {
      const session = await ctx.backend.sessions.create({}, {});
      await expectStorageError(
        ctx.backend.runs.update(uid('missing'), { status: 'completed' }),
        'RUN_NOT_FOUND',
      );
      const { run } = await ctx.backend.runs.create({ sessionId: session.id });
      await expectValidationError(
        ctx.backend.runs.update(run.id, { status: 'exploded' } as unknown as { status: 'failed' }),
        'status',
      );
      await expectValidationError(
        ctx.backend.runs.update(run.id, { usage: { inputTokens: -1 } } as unknown as {
          usage: null;
        }),
        'usage',
      );
      await expectValidationError(
        ctx.backend.runs.create({ sessionId: session.id, status: 'completed' } as unknown as {
          sessionId: string;
        }),
        'status',
      );
      await expectValidationError(
        ctx.backend.runs.create({ sessionId: session.id, extra: 1 } as unknown as {
          sessionId: string;
        }),
        '(root)',
      );
      expect(await ctx.backend.runs.get(run.id)).toEqual(run);
    });

    it('lists runs of a session newest first and active runs across sessions', async () => {
      const a = await ctx.backend.sessions.create({}, {});
      const b = await ctx.backend.sessions.create({}, {});
      const c = await ctx.backend.sessions.create({}, {});
      const { run: a1 } = await ctx.backend.runs.create({ sessionId: a.id });
      await ctx.backend.runs.update(a1.id, { status: 'completed' });
      await sleep(5);
      const { run: a2 } = await ctx.backend.runs.create({ sessionId: a.id });
      const { run: b1 } = await ctx.backend.runs.create({ sessionId: b.id, status: 'running' });
      const { run: c1 } = await ctx.backend.runs.create({ sessionId: c.id });
      await ctx.backend.runs.update(c1.id, { status: 'aborted' });
      expect((await ctx.backend.runs.list(a.id)).map((r) => r.id)).toEqual([a2.id, a1.id]);
      expect((await ctx.backend.runs.listActive()).map((r) => r.id).sort()).toEqual(
        [a2.id, b1.id].sort(),
      );
      expect(await ctx.backend.runs.list(uid('missing'))).toEqual([]);
    });
  });

  describe('callback attempts', () => {
    /** A run (of a new session) and a factory of attempts on it. */
    async function runWithAttempts() {
      const session = await ctx.backend.sessions.create({}, {});
      const { run } = await ctx.backend.runs.create({ sessionId: session.id });
      const base = Date.UTC(2026, 0, 2, 3, 4, 5, 678);
      const attempt = (n: number, overrides: Partial<CallbackAttempt> = {}): CallbackAttempt => ({
        runId: run.id,
        deliveryId: 'delivery-1',
        url: 'https://hooks.example.com/done?x=1',
        attempt: n,
        startedAt: new Date(base + n * 1000),
        durationMs: 10 * n,
        status: 503,
        ok: false,
        error: 'HTTP 503',
        ...overrides,
      });
      return { session, run, attempt };
    }

    it('records attempts and lists them oldest first, exactly as recorded', async () => {
      const { session, run, attempt } = await runWithAttempts();
      const third = attempt(3, { status: 200, ok: true, error: null });
      const first = attempt(1, { status: null, error: 'connect ECONNREFUSED 127.0.0.1:9' });
      const second = attempt(2);
      // Recorded out of order: the list orders by start time, not by insertion.
      for (const a of [third, first, second]) {
        expect(await ctx.backend.runs.recordCallbackAttempt(a)).toEqual(a);
      }
      await ctx.backend.runs.update(run.id, { status: 'completed' });
      const { run: other } = await ctx.backend.runs.create({ sessionId: session.id });
      await ctx.backend.runs.recordCallbackAttempt(
        attempt(1, { runId: other.id, deliveryId: 'd2' }),
      );
      expect(await ctx.backend.runs.listCallbackAttempts(run.id)).toEqual([first, second, third]);
      expect(await ctx.backend.runs.listCallbackAttempts(other.id)).toHaveLength(1);
    });

    it('orders attempts started in the same millisecond by attempt number', async () => {
      const { run, attempt } = await runWithAttempts();
      const at = new Date();
      await ctx.backend.runs.recordCallbackAttempt(attempt(2, { startedAt: at }));
      await ctx.backend.runs.recordCallbackAttempt(attempt(1, { startedAt: at }));
      expect((await ctx.backend.runs.listCallbackAttempts(run.id)).map((a) => a.attempt)).toEqual([
        1, 2,
      ]);
    });

    it('lists nothing for a run without attempts or an unknown run; recording on one is RUN_NOT_FOUND', async () => {
      const { run, attempt } = await runWithAttempts();
      expect(await ctx.backend.runs.listCallbackAttempts(run.id)).toEqual([]);
      const missing = uid('missing');
      expect(await ctx.backend.runs.listCallbackAttempts(missing)).toEqual([]);
      await expectStorageError(
        ctx.backend.runs.recordCallbackAttempt(attempt(1, { runId: missing })),
        'RUN_NOT_FOUND',
      );
    });

    it('refuses a second record of the same delivery attempt with CONFLICT', async () => {
      const { run, attempt } = await runWithAttempts();
      await ctx.backend.runs.recordCallbackAttempt(attempt(1));
      await expectStorageError(
        ctx.backend.runs.recordCallbackAttempt(attempt(1, { status: 200, ok: true, error: null })),
        'CONFLICT',
      );
      expect(await ctx.backend.runs.listCallbackAttempts(run.id)).toEqual([attempt(1)]);
    });

    it('deletes the attempts with their session', async () => {
      const { session, run, attempt } = await runWithAttempts();
      await ctx.backend.runs.recordCallbackAttempt(attempt(1));
      expect(await ctx.backend.sessions.delete(session.id, {})).toBe(true);
      expect(await ctx.backend.runs.listCallbackAttempts(run.id)).toEqual([]);
      // A run re-created under the same id starts without attempts: none outlived the first.
      const again = await ctx.backend.sessions.create({}, {});
      await ctx.backend.runs.create({ id: run.id, sessionId: again.id });
      expect(await ctx.backend.runs.listCallbackAttempts(run.id)).toEqual([]);
    });

    it('rejects invalid attempts with VALIDATION_ERROR naming the field', async () => {
      const { run, attempt } = await runWithAttempts();
      const invalid = (patch: Record<string, unknown>) =>
        ctx.backend.runs.recordCallbackAttempt({ ...attempt(1), ...patch });
      await expectValidationError(invalid({ attempt: 0 }), 'attempt');
      await expectValidationError(invalid({ status: 42 }), 'status');
      await expectValidationError(invalid({ url: '' }), 'url');
      await expectValidationError(invalid({ durationMs: -1 }), 'durationMs');
      await expectValidationError(invalid({ startedAt: '2026-01-01' }), 'startedAt');
      await expectValidationError(invalid({ deliveryId: '' }), 'deliveryId');
      await expectValidationError(invalid({ extra: true }), '(root)');
      expect(await ctx.backend.runs.listCallbackAttempts(run.id)).toEqual([]);
    });
  });
}

/** Pending completion-callback deliveries: stored, claimed once per attempt, settled. */
export function pendingCallbackTests(ctx: SuiteContext): void {
  describe('pending callbacks', () => {
    async function finishedRun() {
      const session = await ctx.backend.sessions.create({}, {});
      const { run } = await ctx.backend.runs.create({ sessionId: session.id, status: 'running' });
      await ctx.backend.runs.update(run.id, { status: 'completed' });
      return { session, run };
    }
    const pending = (runId: string, deliveryId: string, due: number) => ({
      deliveryId,
      runId,
      url: 'https://example.com/hook',
      body: '{"run_id":"x","output":"é 😀"}',
      headers: { 'x-a2a-notification-token': 'tok-é', authorization: 'Bearer s' },
      attempts: 0,
      nextAttemptAt: new Date(due),
    });

    it('stores deliveries, lists them earliest due first and removes settled ones', async () => {
      const { run } = await finishedRun();
      const late = pending(run.id, uid('d'), Date.UTC(2026, 0, 2));
      const early = pending(run.id, uid('d'), Date.UTC(2026, 0, 1));
      await ctx.backend.runs.savePendingCallback(late);
      await ctx.backend.runs.savePendingCallback(early);
      expect(await ctx.backend.runs.listPendingCallbacks()).toEqual([early, late]);
      const later = new Date(Date.UTC(2026, 0, 3));
      await ctx.backend.runs.settlePendingCallback(early.deliveryId, later);
      await ctx.backend.runs.settlePendingCallback(late.deliveryId, null);
      expect(await ctx.backend.runs.listPendingCallbacks()).toEqual([
        { ...early, nextAttemptAt: later },
      ]);
      await expectStorageError(ctx.backend.runs.savePendingCallback(early), 'CONFLICT');
      await expectStorageError(
        ctx.backend.runs.savePendingCallback(pending(uid('missing'), uid('d'), 0)),
        'RUN_NOT_FOUND',
      );
    });

    it('grants each attempt to exactly one of concurrent claimants, in order', async () => {
      const { run } = await finishedRun();
      const delivery = pending(run.id, uid('d'), 0);
      await ctx.backend.runs.savePendingCallback(delivery);
      expect(await ctx.backend.runs.claimCallbackAttempt(delivery.deliveryId, 2)).toBe(false);
      const claims = await Promise.all(
        [1, 1, 1].map(() => ctx.backend.runs.claimCallbackAttempt(delivery.deliveryId, 1)),
      );
      expect(claims.filter(Boolean)).toHaveLength(1);
      expect(await ctx.backend.runs.claimCallbackAttempt(delivery.deliveryId, 2)).toBe(true);
      expect((await ctx.backend.runs.listPendingCallbacks())[0]?.attempts).toBe(2);
      await ctx.backend.runs.settlePendingCallback(delivery.deliveryId, null);
      expect(await ctx.backend.runs.claimCallbackAttempt(delivery.deliveryId, 3)).toBe(false);
    });

    it('deletes pending deliveries with their session', async () => {
      const { session, run } = await finishedRun();
      await ctx.backend.runs.savePendingCallback(pending(run.id, uid('d'), 0));
      await ctx.backend.sessions.delete(session.id, {});
      expect(await ctx.backend.runs.listPendingCallbacks()).toEqual([]);
    });
  });
}
