import type { StorageBackend } from '@cognition/storage';
import { silentLogger } from '../logger';
import type { FiringOutcome, FiringSend } from '../runs/admission/send-input';
import { ScriptedChatModel } from '../testing/scripted-chat-model';
import type { TestRuntime } from '../testing/test-runtime';
import { createTestRuntime, waitFor } from '../testing/test-runtime';
import { ScheduleRunner } from './schedule-runner';
import { ScheduleService } from './schedule-service';

/**
 * A pass's `new_session` firings admitted together (`RunScheduler.admitFirings`, one storage
 * write), and claims ahead of the due time (look-ahead): the run never starts before its due
 * time, and a node dying after such a claim leaves a firing another node fires once.
 */

/** A clock the spec moves by hand. */
class FakeClock {
  constructor(public t: Date) {}
  now = () => new Date(this.t.getTime());
  advance(ms: number) {
    this.t = new Date(this.t.getTime() + ms);
  }
}

const NEW_SESSION = { kind: 'new_session' as const, agentName: 'default' };

interface Bed {
  rt: TestRuntime;
  clock: FakeClock;
  service: ScheduleService;
  /** Each batch admission: the clock when it was called, and its firings. */
  admissions: { at: Date; firings: FiringSend[] }[];
  runner(
    nodeId: string,
    o?: { lookAheadMs?: number; admit?: (f: FiringSend[]) => Promise<FiringOutcome[]> },
  ): ScheduleRunner;
}

async function bed(): Promise<Bed> {
  const rt = await createTestRuntime({
    chatModel: new ScriptedChatModel(Array.from({ length: 20 }, (_, i) => ({ text: `r${i}` }))),
  });
  const clock = new FakeClock(new Date(Math.ceil(Date.now() / 1000) * 1000 + 500));
  const admissions: Bed['admissions'] = [];
  const runner: Bed['runner'] = (nodeId, o = {}) =>
    new ScheduleRunner({
      storage: rt.storage,
      send: (input, options) => rt.runs.scheduler.send(input, options),
      admitFirings:
        o.admit ??
        ((firings) => {
          admissions.push({ at: clock.now(), firings });
          return rt.runs.scheduler.admitFirings(firings);
        }),
      deleteSession: async (id) => {
        await rt.runs.forgetSession(id);
        await rt.storage.sessions.delete(id, {});
      },
      nodeId,
      clock,
      logger: silentLogger,
      ...(o.lookAheadMs !== undefined ? { lookAheadMs: o.lookAheadMs } : {}),
    });
  const service = new ScheduleService({
    storage: rt.storage,
    runner: runner('api'),
    validateSessionInput: (input) => rt.runs.validateSessionInput(input),
    allowPrivateCallbacks: true,
    clock,
  });
  return { rt, clock, service, admissions, runner };
}

/** Every run of every session (the runs of a batch's new sessions). */
async function allRuns(storage: StorageBackend) {
  const sessions = await storage.sessions.list({}, {});
  const runs = await Promise.all(sessions.sessions.map((s) => storage.runs.list(s.id)));
  return { sessions: sessions.sessions, runs: runs.flat() };
}

describe('schedules: batch admission and look-ahead (issue 29)', () => {
  it('admits a pass of new_session firings together; each runs once and cleans up', async () => {
    const b = await bed();
    try {
      const kept = await Promise.all(
        [0, 1, 2].map(() =>
          b.service.create(
            { afterSeconds: 1, target: NEW_SESSION, content: 'hello', metadata: { team: 'ops' } },
            { tenant: 'a' },
          ),
        ),
      );
      const gone = await b.service.create(
        { afterSeconds: 1, target: { ...NEW_SESSION, onRunCompleted: 'delete' }, content: 'x' },
        { tenant: 'a' },
      );
      b.clock.advance(1000);
      const runner = b.runner('n1');
      await runner.tick();
      // One admission for the four firings of the pass.
      expect(b.admissions.map((a) => a.firings.length)).toEqual([4]);
      for (const s of [...kept, gone]) {
        const [fire] = await b.service.fires(s.id, { tenant: 'a' });
        expect(fire).toMatchObject({ reason: 'scheduled', run: { sessionId: fire?.sessionId } });
        await waitFor(
          async () => (await b.rt.storage.runs.get(fire?.runId ?? ''))?.status === 'completed',
        );
      }
      const [fire] = await b.service.fires(kept[0]?.id ?? '', { tenant: 'a' });
      const session = await b.rt.storage.sessions.get(fire?.sessionId ?? '', { tenant: 'a' });
      expect(session).toMatchObject({
        agentName: 'default',
        metadata: { team: 'ops', schedule_id: kept[0]?.id },
        scopes: { tenant: 'a' },
      });
      const history = await b.rt.storage.messages.listAll(session?.id ?? '', {});
      expect(history.map((m) => [m.role, m.content])).toEqual([
        ['user', 'hello'],
        ['assistant', expect.stringMatching(/^r\d+$/)],
      ]);
      expect(history[0]?.metadata).toMatchObject({
        schedule_id: kept[0]?.id,
        schedule_due_at: fire?.dueAt.toISOString(),
      });
      // The delete-on-completion session goes once its run ended (the next pass settles it).
      const [goneFire] = await b.service.fires(gone.id, { tenant: 'a' });
      await runner.tick();
      expect(await b.rt.storage.sessions.get(goneFire?.sessionId ?? '', {})).toBeNull();
      const { runs } = await allRuns(b.rt.storage);
      expect(runs).toHaveLength(3);
    } finally {
      await b.rt.cleanup();
    }
  });

  it('gives up a firing whose agent is gone without failing the others of its batch', async () => {
    const b = await bed();
    try {
      const ok = await b.service.create({ afterSeconds: 1, target: NEW_SESSION, content: 'a' }, {});
      // Stored with an agent that is not in force (deleted since it was created).
      const orphan = await b.rt.storage.schedules.create(
        {
          id: 'sch_orphan',
          kind: 'once',
          expression: null,
          timezone: 'UTC',
          runAt: ok.nextFireAt,
          endTime: null,
          enabled: true,
          misfire: 'run_once',
          target: {
            ...NEW_SESSION,
            agentName: 'deleted-agent',
            config: {},
            onRunCompleted: 'keep',
          },
          content: 'b',
          metadata: {},
          callbackUrl: null,
          multitaskStrategy: 'enqueue',
          nextFireAt: ok.nextFireAt,
        },
        {},
      );
      b.clock.advance(1000);
      await b.runner('n1').tick();
      expect(b.admissions.map((a) => a.firings.length)).toEqual([2]);
      const [okFire] = await b.service.fires(ok.id, {});
      expect(okFire?.runId).not.toBeNull();
      const [orphanFire] = await b.service.fires(orphan.id, {});
      expect(orphanFire).toMatchObject({ runId: null, cleanup: 'done' });
      const { sessions, runs } = await allRuns(b.rt.storage);
      expect(sessions).toHaveLength(1);
      expect(runs).toHaveLength(1);
    } finally {
      await b.rt.cleanup();
    }
  });

  it('claims ahead of the due time and starts the run only once it is due', async () => {
    const b = await bed();
    try {
      const s = await b.service.create(
        { afterSeconds: 2, target: NEW_SESSION, content: 'soon' },
        {},
      );
      const dueAt = s.nextFireAt;
      if (!dueAt) throw new Error('expected a due time');
      b.clock.advance(500); // 1.5 s before the due time: within the 2 s look-ahead
      const claimedAt = b.clock.now();
      const runner = b.runner('n1', { lookAheadMs: 2000 });
      await runner.tick();
      // The pass has claimed it and returned; the firing waits for its due time.
      const [claimed] = await b.service.fires(s.id, {});
      expect(claimed).toMatchObject({ runId: null, nodeId: 'n1' });
      expect(claimed?.claimedAt.getTime()).toBe(claimedAt.getTime());
      // Time goes by in steps of 100 ms.
      const ticking = setInterval(() => {
        b.clock.advance(100);
      }, 5);
      try {
        await waitFor(() => Promise.resolve(b.admissions.length > 0));
        await runner.stop();
      } finally {
        clearInterval(ticking);
      }
      // Admitted at its due time, not before.
      expect(b.admissions).toHaveLength(1);
      expect(b.admissions[0]?.at.getTime()).toBeGreaterThanOrEqual(dueAt.getTime());
      const [fire] = await b.service.fires(s.id, {});
      expect(fire?.runId).not.toBeNull();
    } finally {
      await b.rt.cleanup();
    }
  });

  it('fires once when the node that claimed ahead dies before the due time', async () => {
    const b = await bed();
    try {
      const s = await b.service.create(
        { afterSeconds: 2, target: NEW_SESSION, content: 'orphaned' },
        {},
      );
      b.clock.advance(500);
      // The claimer dies before admitting (its admission never completes).
      let attempts = 0;
      const dying = b.runner('dying', {
        lookAheadMs: 2000,
        admit: () => {
          attempts += 1;
          return Promise.reject(Object.assign(new Error('node died'), { code: 'UNAVAILABLE' }));
        },
      });
      await dying.tick();
      const ticking = setInterval(() => {
        b.clock.advance(100);
      }, 5);
      try {
        await waitFor(() => Promise.resolve(attempts > 0));
        await dying.stop();
      } finally {
        clearInterval(ticking);
      }
      const [claimed] = await b.service.fires(s.id, {});
      expect(claimed).toMatchObject({ runId: null, nodeId: 'dying', cleanup: 'none' });
      const other = b.runner('b', { lookAheadMs: 2000 });
      await other.tick(); // the claim is still fresh: nothing
      expect((await allRuns(b.rt.storage)).runs).toHaveLength(0);
      b.clock.advance(31_000);
      await other.tick();
      await other.tick();
      const { sessions, runs } = await allRuns(b.rt.storage);
      expect(sessions.map((x) => x.id)).toEqual([claimed?.sessionId]);
      expect(runs).toHaveLength(1);
      const [fire] = await b.service.fires(s.id, {});
      expect(fire).toMatchObject({ nodeId: 'b', runId: runs[0]?.id });
      // A one-shot: nothing left to fire, and further passes fire nothing more.
      b.clock.advance(60_000);
      await other.tick();
      expect((await allRuns(b.rt.storage)).runs).toHaveLength(1);
    } finally {
      await b.rt.cleanup();
    }
  });
});
