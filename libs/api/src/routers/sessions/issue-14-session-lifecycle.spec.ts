import type { SessionEvent } from '@cognition/runtime';
import { describeError, toHttpError } from '../../errors';
import type { ApiTestBed } from '../../testing/test-bed';
import { collect, createApiTestBed, trpcErrorOf } from '../../testing/test-bed';
import { ALICE, BOB, lastCallTexts, must, turn } from '../../testing/session-turns';

describe('issue 14: session lifecycle over tRPC', () => {
  let bed: ApiTestBed;

  beforeEach(async () => {
    bed = await createApiTestBed();
  });
  afterEach(async () => {
    await bed.cleanup();
  });

  describe('status actions', () => {
    it('suspend → messages 409 → resume → complete (terminal, reads work) with versions', async () => {
      const caller = bed.as(ALICE);
      const session = await caller.sessions.create({ title: 's' });
      const suspended = await caller.sessions.suspend({ id: session.id, expectedVersion: 1 });
      expect(suspended).toMatchObject({ status: 'suspended', version: 2, endedAt: null });
      const refused = await trpcErrorOf(
        caller.messages.send({ sessionId: session.id, content: 'x' }),
      );
      expect(toHttpError(refused).status).toBe(409);
      expect(toHttpError(refused).body.detail).toContain('suspended');
      const resumed = await caller.sessions.resume({ id: session.id });
      expect(resumed).toMatchObject({ status: 'active', version: 3 });
      const completed = await caller.sessions.complete({ id: session.id });
      expect(completed.status).toBe('completed');
      expect(completed.endedAt).toBeInstanceOf(Date);
      expect((await caller.sessions.get({ id: session.id })).status).toBe('completed');
      expect((await caller.messages.list({ sessionId: session.id })).total).toBe(0);
      const closed = await trpcErrorOf(
        caller.messages.send({ sessionId: session.id, content: 'x' }),
      );
      expect(toHttpError(closed).status).toBe(409);
    });

    it('refuses a wrong state with 409 CONFLICT naming it, and fail keeps its reason in the log', async () => {
      const caller = bed.as();
      const session = await caller.sessions.create({});
      const notSuspended = await trpcErrorOf(caller.sessions.resume({ id: session.id }));
      expect(toHttpError(notSuspended)).toMatchObject({
        status: 409,
        body: { code: 'CONFLICT' },
      });
      expect(toHttpError(notSuspended).body.detail).toContain('it is active');
      const failed = await caller.sessions.fail({ id: session.id, reason: 'quota exhausted' });
      expect(failed).toMatchObject({ status: 'failed', version: 2 });
      const resumeFailed = await trpcErrorOf(caller.sessions.resume({ id: session.id }));
      expect(toHttpError(resumeFailed).body.detail).toContain('it is failed');
      for (const attempt of [
        caller.sessions.suspend({ id: session.id }),
        caller.sessions.complete({ id: session.id }),
        caller.sessions.clear({ id: session.id }),
      ]) {
        expect(toHttpError(await trpcErrorOf(attempt)).status).toBe(409);
      }
      const log = await caller.sessions.activity({ id: session.id });
      const saved = log.entries.find((e) => e.type === 'session.saved' && e.action === 'fail');
      expect(saved).toMatchObject({
        detail: { reason: 'quota exhausted' },
        statusBefore: 'active',
        statusAfter: 'failed',
        versionBefore: 1,
        versionAfter: 2,
      });
    });

    it('lets exactly one of two concurrent suspends at one version win (the other 409)', async () => {
      const session = await bed.as().sessions.create({});
      const results = await Promise.allSettled([
        bed.as().sessions.suspend({ id: session.id, expectedVersion: 1 }),
        bed.as().sessions.suspend({ id: session.id, expectedVersion: 1 }),
      ]);
      expect(results.filter((r) => r.status === 'fulfilled')).toHaveLength(1);
      const lost = results.find((r): r is PromiseRejectedResult => r.status === 'rejected');
      expect(toHttpError(lost?.reason).status).toBe(409);
      expect((await bed.as().sessions.get({ id: session.id })).version).toBe(2);
    });

    it('aborts a running run before suspending (its partial answer is kept)', async () => {
      const session = await bed.as().sessions.create({});
      bed.model.push({ text: ['partial'], hang: true });
      const sent = await bed.as().messages.send({ sessionId: session.id, content: 'go' });
      const events = await bed.runs.events(session.id, {}, { runId: sent.run.id });
      for await (const envelope of events) if (envelope.event.type === 'token') break;
      const suspended = await bed.as().sessions.suspend({ id: session.id });
      expect(suspended.status).toBe('suspended');
      expect((await bed.storage.runs.get(sent.run.id))?.status).toBe('aborted');
      const log = await bed.as().sessions.activity({ id: session.id });
      expect(log.entries.find((e) => e.type === 'session.saved')?.detail).toEqual({
        aborted_run_id: sent.run.id,
      });
      // The finisher saw a suspended session and left its status alone.
      expect((await bed.as().sessions.get({ id: session.id })).status).toBe('suspended');
    });
  });

  describe('suspend with queued messages (double-texting enqueue)', () => {
    it('starts no queued run while suspended; resume starts it', async () => {
      const session = await bed.as().sessions.create({});
      bed.model.push({ text: ['working'], hang: true });
      const first = await bed.as().messages.send({ sessionId: session.id, content: 'first' });
      const events = await bed.runs.events(session.id, {}, { runId: first.run.id });
      for await (const envelope of events) if (envelope.event.type === 'token') break;
      const queued = await bed.as().messages.send({
        sessionId: session.id,
        content: 'second',
        multitaskStrategy: 'enqueue',
      });
      expect(queued.run.status).toBe('pending');
      await bed.as().sessions.suspend({ id: session.id });
      expect((await bed.storage.runs.get(first.run.id))?.status).toBe('aborted');
      // The run that ended would start the queued one; the suspended session keeps it waiting.
      await new Promise((resolve) => setTimeout(resolve, 100));
      expect((await bed.storage.runs.get(queued.run.id))?.status).toBe('pending');
      bed.model.push({ text: 'second answer' });
      await bed.as().sessions.resume({ id: session.id });
      await collect(await bed.runs.events(session.id, {}, { runId: queued.run.id }));
      expect((await bed.storage.runs.get(queued.run.id))?.status).toBe('completed');
    });
  });

  describe('run outcomes through the pipeline', () => {
    it('a failed run moves the session to error and a completed one back, as logged updates', async () => {
      const session = await bed.as().sessions.create({});
      bed.model.push({ error: new Error('model down') });
      const failed = await bed.as().messages.send({ sessionId: session.id, content: 'q' });
      await collect(await bed.runs.events(session.id, {}, { runId: failed.run.id }));
      expect((await bed.as().sessions.get({ id: session.id })).status).toBe('error');
      await turn(bed, session.id, 'again', 'fine');
      expect((await bed.as().sessions.get({ id: session.id })).status).toBe('active');
      const log = await bed.as().sessions.activity({ id: session.id });
      const saved = log.entries.filter((e) => e.type === 'session.saved' && e.action === 'update');
      expect(saved.map((e) => [e.statusBefore, e.statusAfter, e.detail['cause']])).toEqual([
        ['error', 'active', 'run'],
        ['active', 'error', 'run'],
      ]);
      expect(saved[1]?.detail['run_id']).toBe(failed.run.id);
    });
  });

  describe('PATCH through the pipeline', () => {
    it('sets the system prompt and task, which the next turn uses instead of the agent prompt', async () => {
      const session = await bed.as().sessions.create({});
      const updated = await bed.as().sessions.update({
        id: session.id,
        systemPrompt: 'You are a pirate.',
        task: 'Find the treasure',
      });
      expect(updated).toMatchObject({
        systemPrompt: 'You are a pirate.',
        task: 'Find the treasure',
      });
      await turn(bed, session.id, 'hello', 'arr');
      const system = lastCallTexts(bed)[0] ?? '';
      expect(system.startsWith('You are a pirate.')).toBe(true);
      expect(system).toContain('<task>\nFind the treasure\n</task>');
      // null restores the agent's prompt.
      await bed.as().sessions.update({ id: session.id, systemPrompt: null, task: null });
      await turn(bed, session.id, 'again', 'ok');
      const restored = lastCallTexts(bed)[0] ?? '';
      expect(restored).not.toContain('pirate');
      expect(restored).not.toContain('<task>');
    });

    it('writes and removes single metadata keys, keeping the others', async () => {
      const session = await bed.as().sessions.create({ metadata: { a: '1', b: '2' } });
      const set = await bed.as().sessions.setMetadata({ id: session.id, key: 'c', value: '3' });
      expect(set.metadata).toEqual({ a: '1', b: '2', c: '3' });
      const removed = await bed.as().sessions.deleteMetadata({ id: session.id, key: 'a' });
      expect(removed.metadata).toEqual({ b: '2', c: '3' });
      const missing = await trpcErrorOf(
        bed.as().sessions.deleteMetadata({ id: session.id, key: 'zz' }),
      );
      expect(toHttpError(missing)).toMatchObject({ status: 404, body: { code: 'NOT_FOUND' } });
      const stale = await trpcErrorOf(
        bed.as().sessions.setMetadata({ id: session.id, key: 'd', value: '4', expectedVersion: 1 }),
      );
      expect(describeError(stale).code).toBe('VERSION_CONFLICT');
    });
  });

  describe('hooks and events', () => {
    it('runs hooks by priority, lets them change the session, and emits every event in order', async () => {
      const order: string[] = [];
      const events: SessionEvent[] = [];
      bed.sessions.on('*', (event) => events.push(event));
      bed.sessions.hook('beforeSave', (s) => {
        order.push('beforeSave:low');
        return { ...s, metadata: { ...s.metadata, stamped: 'low' } };
      });
      bed.sessions.hook(
        'beforeSave',
        (s) => {
          order.push('beforeSave:high');
          s.metadata = { ...s.metadata, stamped: 'high', high: 'yes' };
          return undefined;
        },
        { priority: 10 },
      );
      for (const point of ['afterLoad', 'afterAction', 'afterSave'] as const) {
        bed.sessions.hook(point, () => {
          order.push(point);
          return undefined;
        });
      }
      const session = await bed.as().sessions.create({});
      events.length = 0;
      const saved = await bed.as().sessions.suspend({ id: session.id });
      expect(order).toEqual([
        'afterLoad',
        'afterAction',
        'beforeSave:high',
        'beforeSave:low',
        'afterSave',
      ]);
      // The low-priority hook ran last: its value wins, the high one's extra key is kept.
      expect(saved.metadata).toEqual({ stamped: 'low', high: 'yes' });
      expect(events.map((e) => e.type)).toEqual([
        'session.loaded',
        'session.action_executed',
        'session.saved',
      ]);
      expect(events[1]).toMatchObject({
        action: 'suspend',
        versionBefore: 1,
        versionAfter: 2,
        statusBefore: 'active',
        statusAfter: 'suspended',
      });
      expect(events.every((e) => e.id > 0 && e.sessionId === session.id)).toBe(true);
      // The persisted log holds the same entries, newest first.
      const log = await bed.as().sessions.activity({ id: session.id, limit: 3 });
      expect(log.entries.map((e) => e.id)).toEqual(events.map((e) => e.id).reverse());
    });

    it('emits load_failed and save_failed with the error code, and rethrows the typed error', async () => {
      const events: SessionEvent[] = [];
      bed.sessions.on('session.load_failed', (e) => events.push(e));
      bed.sessions.on('session.save_failed', (e) => events.push(e));
      const missing = await trpcErrorOf(bed.as().sessions.suspend({ id: 'ghost' }));
      expect(toHttpError(missing).status).toBe(404);
      expect(events[0]).toMatchObject({
        type: 'session.load_failed',
        sessionId: 'ghost',
        errorCode: 'SESSION_NOT_FOUND',
      });
      const session = await bed.as().sessions.create({});
      // A writer sneaks in between load and save: the conditional save fails.
      const off = bed.sessions.hook('beforeSave', async (s) => {
        await bed.storage.sessions.update(s.id, { title: 'sneaky' }, {});
        return undefined;
      });
      const conflict = await trpcErrorOf(bed.as().sessions.suspend({ id: session.id }));
      off();
      expect(describeError(conflict).code).toBe('VERSION_CONFLICT');
      expect(events[1]).toMatchObject({
        type: 'session.save_failed',
        errorCode: 'VERSION_CONFLICT',
        action: 'suspend',
      });
      expect((await bed.as().sessions.get({ id: session.id })).status).toBe('active');
      // A stale expectedVersion fails before the action runs (nothing aborted, nothing saved).
      const stale = await trpcErrorOf(
        bed.as().sessions.suspend({ id: session.id, expectedVersion: 1 }),
      );
      expect(describeError(stale).code).toBe('VERSION_CONFLICT');
      expect(events[2]).toMatchObject({
        type: 'session.save_failed',
        errorCode: 'VERSION_CONFLICT',
      });
    });

    it('keeps activity and actions scoped: another tenant gets 404 everywhere', async () => {
      const own = await bed.as(ALICE).sessions.create({});
      const bob = bed.as(BOB);
      for (const attempt of [
        bob.sessions.suspend({ id: own.id }),
        bob.sessions.resume({ id: own.id }),
        bob.sessions.complete({ id: own.id }),
        bob.sessions.fail({ id: own.id }),
        bob.sessions.clear({ id: own.id }),
        bob.sessions.fork({ id: own.id }),
        bob.sessions.rewind({ id: own.id, messageId: 'x' }),
        bob.sessions.setMetadata({ id: own.id, key: 'k', value: 'v' }),
        bob.sessions.deleteMetadata({ id: own.id, key: 'k' }),
        bob.sessions.history({ id: own.id }),
        bob.sessions.activity({ id: own.id }),
        bob.messages.rebuild({ sessionId: own.id }),
      ]) {
        const error = await trpcErrorOf(attempt);
        expect(toHttpError(error).body.detail).toBe(`Session not found: ${own.id}`);
      }
      expect((await bed.as(ALICE).sessions.get({ id: own.id })).version).toBe(1);
    });
  });

  describe('bad input names the field', () => {
    it('422s bad ids, versions, keys and point combinations', async () => {
      const session = await bed.as().sessions.create({});
      const cases: [Promise<unknown>, string][] = [
        [bed.as().sessions.suspend({ id: '' }), 'id'],
        [bed.as().sessions.suspend({ id: session.id, expectedVersion: 0 }), 'expectedVersion'],
        [bed.as().sessions.fail({ id: session.id, reason: '' }), 'reason'],
        [bed.as().sessions.setMetadata({ id: session.id, key: '', value: 'v' }), 'key'],
        [
          bed.as().sessions.fork({ id: session.id, checkpointId: 'a', messageId: 'b' }),
          'checkpointId',
        ],
        [bed.as().sessions.rewind({ id: session.id }), 'checkpointId'],
        [bed.as().sessions.history({ id: session.id, limit: 0 }), 'limit'],
        [bed.as().sessions.update({ id: session.id, status: 'abandoned' as never }), 'status'],
        [bed.as().sessions.update({ id: session.id, endedAt: new Date() } as never), '(root)'],
        [bed.as().sessions.create({ checkpointRetention: 'sometimes' }), 'checkpointRetention'],
        [bed.as().messages.list({ sessionId: session.id, order: 'up' as never }), 'order'],
      ];
      for (const [attempt, path] of cases) {
        const { status, body } = toHttpError(await trpcErrorOf(attempt));
        expect({ path, status }).toEqual({ path, status: 422 });
        expect(body.errors?.map((issue) => issue.path)).toContain(path);
      }
    });

    it('404s an unknown checkpoint and a fork of a missing message', async () => {
      const session = await bed.as().sessions.create({});
      await turn(bed, session.id, 'q', 'a');
      const checkpoint = await trpcErrorOf(
        bed.as().sessions.rewind({ id: session.id, checkpointId: 'no-such-checkpoint' }),
      );
      expect(toHttpError(checkpoint)).toMatchObject({ status: 404, body: { code: 'NOT_FOUND' } });
      const message = await trpcErrorOf(
        bed.as().sessions.fork({ id: session.id, messageId: 'nope' }),
      );
      expect(toHttpError(message)).toMatchObject({
        status: 404,
        body: { code: 'MESSAGE_NOT_FOUND' },
      });
      expect((await bed.as().sessions.list()).total).toBe(1);
    });
  });

  describe('abandoned', () => {
    it('reads and filters abandoned sessions through the API', async () => {
      const session = await bed.as().sessions.create({});
      bed.storage.setSessionPolicy({
        abandonAfterSeconds: 60,
        now: () => new Date(Date.now() + 61_000),
      });
      expect((await bed.as().sessions.get({ id: session.id })).status).toBe('abandoned');
      expect((await bed.as().sessions.list({ status: 'abandoned' })).total).toBe(1);
      // An action on it works on the stored status (active) and brings it back.
      const suspended = await bed.as().sessions.suspend({ id: session.id });
      expect(suspended.status).toBe('suspended');
    });
  });

  describe('watch', () => {
    it('streams the events of the caller’s sessions live, and replays after a last event id', async () => {
      const session = await bed.as(ALICE).sessions.create({});
      const other = await bed.as(BOB).sessions.create({});
      // Leaving a `for await` early returns the stream, which releases its listener.
      const stream = await bed.as(ALICE).sessions.watch({});
      const seen: [string, { type: string; sessionId: string }][] = [];
      const reading = (async () => {
        for await (const tracked of stream as AsyncIterable<
          [string, { type: string; sessionId: string }]
        >) {
          seen.push(tracked);
          if (seen.length === 3) break;
        }
      })();
      await bed.as(BOB).sessions.suspend({ id: other.id });
      await bed.as(ALICE).sessions.suspend({ id: session.id });
      await reading;
      expect(seen.map(([, e]) => e.type)).toEqual([
        'session.loaded',
        'session.action_executed',
        'session.saved',
      ]);
      expect(seen.every(([, e]) => e.sessionId === session.id)).toBe(true);
      // Replay after the first id of the three gives the other two, from the log.
      const again = await bed
        .as(ALICE)
        .sessions.watch({ sessionId: session.id, lastEventId: must(seen[0])[0] });
      const replayed: string[] = [];
      for await (const [id] of again as AsyncIterable<[string, unknown]>) {
        replayed.push(id);
        if (replayed.length === 2) break;
      }
      expect(replayed).toEqual([must(seen[1])[0], must(seen[2])[0]]);
      const error = await trpcErrorOf(bed.as(BOB).sessions.watch({ sessionId: session.id }));
      expect(toHttpError(error).status).toBe(404);
    });
  });
});
