import type { Run, Schedule } from '@cognition/contracts';
import type { StorageBackend } from '@cognition/storage';
import { createMemoryStorage } from '@cognition/storage-memory';
import { silentLogger } from '../logger';
import { ScriptedChatModel } from '../testing/scripted-chat-model';
import { createTestRuntime, waitFor } from '../testing/test-runtime';
import type { SendInput, SendResult } from '../runs/admission/send-input';
import { parseCron } from './cron';
import { ScheduleRunner } from './schedule-runner';
import { ScheduleService } from './schedule-service';

/** A clock the spec moves by hand. */
class FakeClock {
  constructor(public t: Date) {}
  now = () => new Date(this.t.getTime());
  set(iso: string) {
    this.t = new Date(iso);
  }
  advance(ms: number) {
    this.t = new Date(this.t.getTime() + ms);
  }
}

const berlinDate = (d: Date) => d.toLocaleDateString('sv-SE', { timeZone: 'Europe/Berlin' });
const berlinTime = (d: Date) =>
  d.toLocaleTimeString('sv-SE', { timeZone: 'Europe/Berlin', hour12: false });

/** Records every send as a run created "now" (the spec's own admission). */
function fakeSend(clock: FakeClock, failures: { left: number } = { left: 0 }) {
  const sends: SendInput[] = [];
  const runs = new Map<string, Run>();
  const send = (input: SendInput): Promise<SendResult> => {
    if (failures.left > 0) {
      failures.left -= 1;
      return Promise.reject(Object.assign(new Error('database away'), { code: 'UNAVAILABLE' }));
    }
    const key = input.idempotencyKey ?? '';
    const replay = runs.get(key);
    if (replay) return Promise.resolve({ run: replay, created: false } as SendResult);
    sends.push(input);
    const run = { id: `run-${sends.length}`, createdAt: clock.now() } as Run;
    runs.set(key, run);
    return Promise.resolve({ run, created: true } as SendResult);
  };
  return { send, sends };
}

interface Bed {
  storage: StorageBackend;
  clock: FakeClock;
  service: ScheduleService;
  runner: (nodeId?: string, extra?: { failures?: { left: number } }) => ScheduleRunner;
  sends: SendInput[];
  observed: string[];
}

async function bed(start: string): Promise<Bed> {
  const storage = createMemoryStorage();
  await storage.initialize();
  const clock = new FakeClock(new Date(start));
  const shared = fakeSend(clock);
  const observed: string[] = [];
  const runner = (nodeId = 'n1', extra: { failures?: { left: number } } = {}) =>
    new ScheduleRunner({
      storage,
      send: extra.failures ? fakeSend(clock, extra.failures).send : shared.send,
      deleteSession: async (id) => {
        await storage.sessions.delete(id, {});
      },
      nodeId,
      clock,
      logger: silentLogger,
      observer: {
        fired: (reason) => observed.push(`fired:${reason}`),
        failed: (reason) => observed.push(`failed:${reason}`),
        misfired: (policy) => observed.push(`misfired:${policy}`),
      },
    });
  const first = runner();
  const service = new ScheduleService({
    storage,
    runner: first,
    validateSessionInput: ({ agentName }) =>
      agentName === 'default'
        ? Promise.resolve()
        : Promise.reject(
            Object.assign(new Error('unknown agent'), {
              code: 'VALIDATION_ERROR',
              details: { issues: [{ path: 'agentName', message: `no agent "${agentName}"` }] },
            }),
          ),
    allowPrivateCallbacks: true,
    clock,
  });
  return { storage, clock, service, runner, sends: shared.sends, observed };
}

const NEW_SESSION = { kind: 'new_session' as const, agentName: 'default' };

describe('schedules (issue 29)', () => {
  describe('cron expressions', () => {
    it('name the field and what is wrong', () => {
      const cases: [string, string, string][] = [
        ['0 0 32 * *', 'UTC', 'expression: day-of-month 32 is out of range 1-31'],
        ['61 * * * *', 'UTC', 'expression: minute 61 is out of range 0-59'],
        ['* * * *', 'UTC', 'expression: has 4 fields'],
        ['*/0 * * * *', 'UTC', 'expression: minute step "0" must be a whole number of at least 1'],
        ['0 0 30 2 *', 'UTC', 'expression: never matches a date'],
        ['* * * * *', 'Mars/Olympus', 'timezone: "Mars/Olympus" is not a known IANA time zone'],
      ];
      for (const [expression, zone, message] of cases) {
        expect(() => parseCron(expression, zone)).toThrow(message);
      }
      expect(parseCron('*/15 * * * * *', 'UTC').next(new Date('2026-01-01T00:00:07Z'))).toEqual(
        new Date('2026-01-01T00:00:15Z'),
      );
    });

    it('fires a 02:30 daily schedule in Europe/Berlin once a day across both DST transitions', async () => {
      for (const [from, days] of [
        ['2026-03-27T12:00:00Z', 4], // spring forward on 29 March: 02:30 does not exist
        ['2026-10-23T12:00:00Z', 4], // fall back on 25 October: 02:30 happens twice
      ] as const) {
        const b = await bed(from);
        await b.service.create(
          {
            expression: '30 2 * * *',
            timezone: 'Europe/Berlin',
            target: NEW_SESSION,
            content: 'r',
          },
          {},
        );
        const runner = b.runner();
        // Five-minute steps through the days: every due time is seen within the grace.
        for (let step = 0; step < days * 288; step += 1) {
          b.clock.advance(5 * 60_000);
          await runner.tick();
        }
        const due = b.sends.map((s) => new Date(s.metadata?.schedule_due_at ?? ''));
        expect(due.map(berlinDate)).toEqual([...new Set(due.map(berlinDate))]);
        expect(due).toHaveLength(days);
        // 02:30 local, except the day without one: right after the gap, at 03:00.
        expect(due.map(berlinTime)).toEqual(
          from.startsWith('2026-03')
            ? ['02:30:00', '03:00:00', '02:30:00', '02:30:00']
            : ['02:30:00', '02:30:00', '02:30:00', '02:30:00'],
        );
      }
    });
  });

  describe('the scheduler loop', () => {
    it('fires each occurrence once with two nodes passing at the same time', async () => {
      const b = await bed('2026-05-01T10:00:00.200Z');
      const s = await b.service.create(
        { expression: '* * * * * *', target: NEW_SESSION, content: 'tick' },
        {},
      );
      const nodes = [b.runner('a'), b.runner('b'), b.runner('c')];
      for (let i = 0; i < 20; i += 1) {
        b.clock.advance(1000);
        await Promise.all(nodes.map((n) => n.tick()));
      }
      const due = b.sends.map((x) => x.metadata?.schedule_due_at);
      expect(due).toHaveLength(20);
      expect(new Set(due).size).toBe(20);
      expect(
        b.sends.every(
          (x) => x.idempotencyKey === `schedule:${s.id}:${x.metadata?.schedule_due_at}`,
        ),
      ).toBe(true);
      expect((await b.service.fires(s.id, {}, 100)).map((f) => f.runId)).not.toContain(null);
    });

    it('coalesces occurrences missed while no node ran into one run, or skips them', async () => {
      for (const misfire of ['run_once', 'skip'] as const) {
        const b = await bed('2026-05-01T10:00:30Z');
        const s = await b.service.create(
          { expression: '* * * * *', target: NEW_SESSION, content: 'm', misfire },
          {},
        );
        expect(s.nextFireAt).toEqual(new Date('2026-05-01T10:01:00Z'));
        b.clock.set('2026-05-01T10:15:10Z'); // 15 due minutes passed with no node up
        const runner = b.runner();
        await runner.tick();
        await runner.tick();
        expect(b.sends).toHaveLength(misfire === 'run_once' ? 1 : 0);
        expect(b.observed).toEqual(
          misfire === 'run_once' ? ['misfired:run_once', 'fired:misfire'] : ['misfired:skip'],
        );
        // It continues from its next time after now, on time again.
        expect((await b.service.get(s.id, {})).nextFireAt).toEqual(
          new Date('2026-05-01T10:16:00Z'),
        );
        b.clock.set('2026-05-01T10:16:01Z');
        await runner.tick();
        expect(b.sends.at(-1)?.metadata?.schedule_due_at).toBe('2026-05-01T10:16:00.000Z');
      }
    });

    it('takes over a fire whose claimer failed before its run, without a second session', async () => {
      const b = await bed('2026-05-01T10:00:00Z');
      const s = await b.service.create(
        { afterSeconds: 5, target: NEW_SESSION, content: 'once' },
        {},
      );
      b.clock.advance(6000);
      await b
        .runner('dying', { failures: { left: 1 } })
        .tick()
        .catch(() => undefined);
      const [claimed] = await b.service.fires(s.id, {});
      expect(claimed).toMatchObject({ runId: null, nodeId: 'dying' });
      expect(claimed?.sessionId).not.toBeNull();
      const other = b.runner('b');
      await other.tick(); // too early: the claim is still fresh
      expect(b.sends).toHaveLength(0);
      b.clock.advance(31_000);
      await other.tick();
      await other.tick();
      expect(b.sends).toHaveLength(1);
      expect(b.sends[0]?.sessionId).toBe(claimed?.sessionId);
      expect((await b.storage.sessions.list({}, {})).total).toBe(1);
      // A one-shot fires once: nothing left.
      expect((await b.service.get(s.id, {})).nextFireAt).toBeNull();
    });

    it('runs firings through the run admission, deleting the session once the run ended', async () => {
      const rt = await createTestRuntime({
        chatModel: new ScriptedChatModel(
          Array.from({ length: 8 }, (_, i) => ({ text: `report ${i}` })),
        ),
      });
      try {
        const clock = new FakeClock(new Date());
        const runner = new ScheduleRunner({
          storage: rt.storage,
          send: (input) => rt.runs.scheduler.send(input),
          deleteSession: async (id) => {
            await rt.runs.forgetSession(id);
            await rt.storage.sessions.delete(id, {});
          },
          nodeId: 'n1',
          clock,
          logger: silentLogger,
        });
        const service = new ScheduleService({
          storage: rt.storage,
          runner,
          validateSessionInput: (input) => rt.runs.validateSessionInput(input),
          allowPrivateCallbacks: true,
          clock,
        });
        const gone = await service.create(
          { afterSeconds: 0, target: { ...NEW_SESSION, onRunCompleted: 'delete' }, content: 'a' },
          {},
        );
        const session = await rt.createSession();
        const kept = await service.create(
          {
            expression: '* * * * * *',
            target: { kind: 'session', sessionId: session.id },
            content: 'b',
          },
          {},
        );
        clock.advance(1000);
        await runner.tick();
        const [fire] = await service.fires(gone.id, {});
        expect(fire?.run?.sessionId).toBe(fire?.sessionId);
        await waitFor(
          async () => (await rt.storage.runs.get(fire?.runId ?? ''))?.status === 'completed',
        );
        // Two more firings of the one session: enqueued behind each other, its history grows.
        clock.advance(1000);
        await runner.tick();
        clock.advance(1000);
        await runner.tick();
        await waitFor(async () =>
          (await service.fires(kept.id, {})).every((f) => f.run?.status === 'completed'),
        );
        expect((await service.fires(kept.id, {})).length).toBeGreaterThanOrEqual(2);
        await runner.tick();
        expect(await rt.storage.sessions.get(fire?.sessionId ?? '', {})).toBeNull();
        expect((await service.fires(gone.id, {}))[0]).toMatchObject({ cleanup: 'done', run: null });
        const history = await rt.storage.messages.listAll(session.id, {});
        expect(history.filter((m) => m.role === 'user').map((m) => m.content)).toEqual(
          (await service.fires(kept.id, {})).map(() => 'b'),
        );
      } finally {
        await rt.cleanup();
      }
    });

    it('ends at end_time, stops while disabled and restarts from now when enabled', async () => {
      const b = await bed('2026-05-01T10:00:00.500Z');
      const s = await b.service.create(
        {
          expression: '* * * * * *',
          target: NEW_SESSION,
          content: 'x',
          endTime: new Date('2026-05-01T10:00:03Z'),
        },
        {},
      );
      const runner = b.runner();
      for (let i = 0; i < 6; i += 1) {
        b.clock.advance(1000);
        await runner.tick();
      }
      expect(b.sends.map((x) => x.metadata?.schedule_due_at)).toEqual([
        '2026-05-01T10:00:01.000Z',
        '2026-05-01T10:00:02.000Z',
        '2026-05-01T10:00:03.000Z',
      ]);
      expect((await b.service.get(s.id, {})).nextFireAt).toBeNull();
      const later = await b.service.create(
        { expression: '* * * * * *', target: NEW_SESSION, content: 'y', enabled: false },
        {},
      );
      b.clock.advance(5000);
      await runner.tick();
      expect(b.sends).toHaveLength(3);
      const enabled = await b.service.patch(later.id, { enabled: true }, {});
      expect(enabled.nextFireAt?.getTime()).toBeGreaterThan(b.clock.now().getTime());
    });
  });

  describe('the service', () => {
    it('refuses bad input naming the field, storing nothing', async () => {
      const b = await bed('2026-05-01T10:00:00Z');
      const own = await b.storage.sessions.create({}, { tenant: 'a' });
      const bad: [unknown, string, string][] = [
        [
          { expression: '0 0 32 * *', target: NEW_SESSION, content: 'x' },
          'VALIDATION_ERROR',
          'expression',
        ],
        [
          { expression: '* * * * *', timezone: 'Nowhere/City', target: NEW_SESSION, content: 'x' },
          'VALIDATION_ERROR',
          'timezone',
        ],
        [
          {
            expression: '* * * * *',
            endTime: '2026-04-01T00:00:00Z',
            target: NEW_SESSION,
            content: 'x',
          },
          'VALIDATION_ERROR',
          'endTime',
        ],
        [{ target: NEW_SESSION, content: 'x' }, 'VALIDATION_ERROR', 'expression'],
        [
          { expression: '* * * * *', afterSeconds: 5, target: NEW_SESSION, content: 'x' },
          'VALIDATION_ERROR',
          'expression',
        ],
        [
          {
            expression: '* * * * *',
            target: { kind: 'new_session', agentName: 'ghost' },
            content: 'x',
          },
          'VALIDATION_ERROR',
          'target.agentName',
        ],
        [
          { expression: '* * * * *', target: NEW_SESSION, content: '' },
          'VALIDATION_ERROR',
          'content',
        ],
        [
          { expression: '* * * * *', target: { kind: 'session', sessionId: own.id }, content: 'x' },
          'SESSION_NOT_FOUND',
          '',
        ],
      ];
      for (const [input, code, path] of bad) {
        const error = await b.service
          .create(input as Parameters<ScheduleService['create']>[0], { tenant: 'b' })
          .then(
            () => null,
            (e: unknown) => e as { code: string; details: { issues?: { path: string }[] } },
          );
        expect(error?.code).toBe(code);
        if (path) expect(error?.details.issues?.map((i) => i.path)).toContain(path);
      }
      expect((await b.service.list({})).total).toBe(0);
    });

    it('keeps tenants apart and triggers a schedule now', async () => {
      const b = await bed('2026-05-01T10:00:00Z');
      const session = await b.storage.sessions.create({}, { tenant: 'a' });
      const s: Schedule = await b.service.create(
        {
          expression: '0 9 * * 1',
          target: { kind: 'session', sessionId: session.id },
          content: 'weekly',
        },
        { tenant: 'a' },
      );
      expect(s).toMatchObject({ multitaskStrategy: 'enqueue', misfire: 'run_once', enabled: true });
      await expect(b.service.get(s.id, { tenant: 'b' })).rejects.toMatchObject({
        code: 'NOT_FOUND',
      });
      await expect(b.service.trigger(s.id, { tenant: 'b' })).rejects.toMatchObject({
        code: 'NOT_FOUND',
      });
      await expect(b.service.delete(s.id, { tenant: 'b' })).rejects.toMatchObject({
        code: 'NOT_FOUND',
      });
      const fire = await b.service.trigger(s.id, { tenant: 'a' });
      expect(fire).toMatchObject({ reason: 'manual', sessionId: session.id, runId: 'run-1' });
      expect(b.sends[0]).toMatchObject({
        sessionId: session.id,
        multitaskStrategy: 'enqueue',
        scope: { tenant: 'a' },
      });
      expect((await b.service.list({ tenant: 'a' }, { sessionId: session.id })).total).toBe(1);
      await b.service.delete(s.id, { tenant: 'a' });
      expect((await b.service.list({})).total).toBe(0);
    });
  });
});
