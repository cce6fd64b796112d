import type { StorageBackend } from '@cognition/storage';
import { createMemoryStorage } from '@cognition/storage-memory';
import { InMemoryEventLog } from '../events/event-log';
import { eventId, newRunId } from '../ids';
import { silentLogger } from '../logger';
import { ActiveRuns } from './coordination/active-runs';
import { InProcessRunControl } from './coordination/in-process-run-control';
import { RunLeases } from './coordination/run-leases';
import { RunRecovery, STOPPED_MESSAGE, repairTerminalEvent } from './run-recovery';

describe('RunRecovery (interrupt)', () => {
  let storage: StorageBackend;
  let log: InMemoryEventLog;
  beforeEach(async () => {
    storage = createMemoryStorage();
    await storage.initialize();
    log = new InMemoryEventLog();
  });
  afterEach(() => storage.close());

  const control = new InProcessRunControl();
  const started: string[] = [];
  const recovery = (active: ActiveRuns) =>
    new RunRecovery({
      storage,
      log,
      logger: silentLogger,
      active,
      executor: {
        execute: (run) => {
          started.push(run.runId);
          return Promise.resolve();
        },
      },
      mode: 'interrupt',
      maxRecoveries: 3,
      startNext: () => Promise.resolve(),
      leases: new RunLeases(storage, null, active, silentLogger),
    });

  async function orphan(status: 'queued' | 'running') {
    const session = await storage.sessions.create({ agentName: 'default', config: {} }, {});
    const { run } = await storage.runs.create({ id: newRunId(), sessionId: session.id, status });
    return run;
  }

  it('interrupts active runs no process executes, continuing their event ids', async () => {
    const running = await orphan('running');
    const queued = await orphan('queued');
    await log.append({
      id: eventId(running.id, 1),
      sessionId: running.sessionId,
      runId: running.id,
      at: '2026-01-01T00:00:00.000Z',
      event: { type: 'token', content: 'par' },
    });
    const { interrupted } = await recovery(new ActiveRuns(control, log, silentLogger)).recover();
    expect(interrupted.map((r) => r.status)).toEqual(['interrupted', 'interrupted']);
    expect((await storage.runs.get(queued.id))?.error).toEqual({
      code: 'UNAVAILABLE',
      message: STOPPED_MESSAGE,
    });
    const after = (await log.readAfter(running.sessionId)).events;
    expect(after.map((e) => [e.id, e.event.type])).toEqual([
      [eventId(running.id, 1), 'token'],
      [eventId(running.id, 2), 'error'],
    ]);
    // Nothing of the queued run survived: its error sorts after any id a client could hold.
    const [lone] = (await log.readAfter(queued.sessionId)).events;
    expect(lone?.id).toBe(eventId(queued.id, 10 ** 9 - 1));
  });

  it('leaves runs this process executes alone and adds no second terminal event', async () => {
    const local = await orphan('running');
    const ended = await orphan('running');
    await log.append({
      id: eventId(ended.id, 1),
      sessionId: ended.sessionId,
      runId: ended.id,
      at: '2026-01-01T00:00:00.000Z',
      event: { type: 'done', assistant_data: null },
    });
    const active = new ActiveRuns(control, log, silentLogger);
    active.add(local.id, local.sessionId, {});
    const { interrupted, settled } = await recovery(active).recover();
    // Its clients were told `done`: it completed (its node could not record that in time).
    expect(interrupted).toEqual([]);
    expect(settled.map((r) => r.id)).toEqual([ended.id]);
    expect((await storage.runs.get(ended.id))?.status).toBe('completed');
    expect((await storage.runs.get(local.id))?.status).toBe('running');
    expect((await log.readAfter(ended.sessionId)).events).toHaveLength(1);
    expect((await log.readAfter(local.sessionId)).events).toEqual([]);
    expect(started).toEqual([]);
  });

  it('ends a run whose stored terminal event is an error as that event says (failed, aborted)', async () => {
    const failed = await orphan('running');
    const aborted = await orphan('running');
    for (const [run, event] of [
      [failed, { type: 'error', code: 'UNAVAILABLE', message: 'storage unreachable' }],
      [aborted, { type: 'error', code: 'ABORTED', message: 'The run was aborted' }],
    ] as const) {
      await log.append({
        id: eventId(run.id, 1),
        sessionId: run.sessionId,
        runId: run.id,
        at: '2026-01-01T00:00:00.000Z',
        event,
      });
    }
    const { settled } = await recovery(new ActiveRuns(control, log, silentLogger)).recover();
    expect(settled.map((r) => r.id).sort()).toEqual([failed.id, aborted.id].sort());
    expect(await storage.runs.get(failed.id)).toMatchObject({
      status: 'failed',
      error: { code: 'UNAVAILABLE', message: 'storage unreachable' },
    });
    expect((await storage.runs.get(aborted.id))?.status).toBe('aborted');
    // No second terminal event.
    expect((await log.readAfter(failed.sessionId)).events).toHaveLength(1);
  });

  it('gives a run that ended without its terminal event (died in between) idle and done, once', async () => {
    const run = await orphan('running');
    const user = await storage.messages.create({
      sessionId: run.sessionId,
      role: 'user',
      content: 'q',
    });
    const answer = await storage.messages.create({
      sessionId: run.sessionId,
      role: 'assistant',
      content: 'the answer',
      parentId: user.id,
      metadata: { runId: run.id },
    });
    await log.append({
      id: eventId(run.id, 1),
      sessionId: run.sessionId,
      runId: run.id,
      at: '2026-01-01T00:00:00.000Z',
      event: { type: 'token', content: 'the answer' },
    });
    const ended = await storage.runs.update(run.id, { status: 'completed' });
    await repairTerminalEvent(storage, log, silentLogger, ended);
    await repairTerminalEvent(storage, log, silentLogger, ended);
    const events = (await log.readAfter(run.sessionId)).events;
    expect(events.map((e) => [e.id, e.event.type])).toEqual([
      [eventId(run.id, 1), 'token'],
      [eventId(run.id, 2), 'status'],
      [eventId(run.id, 3), 'done'],
    ]);
    const done = events[2]?.event;
    expect(done?.type === 'done' && done.assistant_data?.id).toBe(answer.id);
  });

  it('gives such a run its usage event with them when the log lacks it (it goes out in their flush)', async () => {
    const run = await orphan('running');
    await log.append({
      id: eventId(run.id, 1),
      sessionId: run.sessionId,
      runId: run.id,
      at: '2026-01-01T00:00:00.000Z',
      event: { type: 'token', content: 'x' },
    });
    const ended = await storage.runs.update(run.id, {
      status: 'failed',
      error: { code: 'INTERNAL_ERROR', message: 'boom' },
      usage: {
        inputTokens: 7,
        outputTokens: 3,
        costUsd: null,
        model: 'm',
        provider: 'p',
        estimated: false,
      },
    });
    await repairTerminalEvent(storage, log, silentLogger, ended);
    await repairTerminalEvent(storage, log, silentLogger, ended);
    const events = (await log.readAfter(run.sessionId)).events;
    expect(events.map((e) => [e.id, e.event.type])).toEqual([
      [eventId(run.id, 1), 'token'],
      [eventId(run.id, 2), 'usage'],
      [eventId(run.id, 3), 'status'],
      [eventId(run.id, 4), 'error'],
    ]);
    expect(events[1]?.event).toEqual({
      type: 'usage',
      input_tokens: 7,
      output_tokens: 3,
      estimated_cost: null,
      provider: 'p',
      model: 'm',
      estimated: false,
    });
  });
});
