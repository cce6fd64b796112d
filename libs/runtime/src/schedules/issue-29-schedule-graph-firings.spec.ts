import type { GraphRunKwargs, Run } from '@cognition/contracts';
import { createMemoryStorage } from '@cognition/storage-memory';
import { silentLogger } from '../logger';
import type { GraphSendInput } from '../runs/admission/send-input';
import { firingSessionId, ScheduleRunner } from './schedule-runner';
import { ScheduleService } from './schedule-service';

/**
 * A schedule whose target has `graph` (a LangGraph cron of a `langgraph.json` graph's
 * assistant): each firing is a graph run with the stored kwargs, through the single-firing path
 * (never the batched admission of agent messages), with the firing's idempotency key.
 */
const KWARGS: GraphRunKwargs = {
  graph_id: 'echo',
  input: { text: 'tick' },
  command: null,
  config: { configurable: { k: 1 } },
  context: {},
  stream_mode: ['values'],
  stream_subgraphs: false,
};

async function bed() {
  const storage = createMemoryStorage();
  await storage.initialize();
  let t = new Date('2026-05-01T10:00:00.000Z');
  const clock = { now: () => new Date(t.getTime()) };
  const graphSends: GraphSendInput[] = [];
  const runs = new Map<string, Run>();
  const runner = new ScheduleRunner({
    storage,
    send: () => Promise.reject(new Error('a graph firing sends no message')),
    admitFirings: () => Promise.reject(new Error('a graph firing is not batch-admitted')),
    sendGraph: (input) => {
      const replay = runs.get(input.idempotencyKey ?? '');
      if (replay) return Promise.resolve({ run: replay, created: false });
      graphSends.push(input);
      const run = { id: `run-${graphSends.length}`, createdAt: clock.now() } as Run;
      runs.set(input.idempotencyKey ?? '', run);
      return Promise.resolve({ run, created: true });
    },
    deleteSession: async (id) => {
      await storage.sessions.delete(id, {});
    },
    nodeId: 'n1',
    clock,
    logger: silentLogger,
  });
  const service = new ScheduleService({
    storage,
    runner,
    validateSessionInput: () => Promise.resolve(),
    allowPrivateCallbacks: true,
    hasGraph: (graphId) => graphId === 'echo',
    clock,
  });
  return {
    storage,
    runner,
    service,
    graphSends,
    advance: (ms: number) => {
      t = new Date(t.getTime() + ms);
    },
  };
}

describe('schedules of langgraph.json graphs (issue 29)', () => {
  it('fire a graph run with the stored kwargs on a new session per firing, once per occurrence', async () => {
    const b = await bed();
    const scope = { user: 'alice' };
    const schedule = await b.service.create(
      {
        expression: '* * * * * *',
        target: { kind: 'new_session', onRunCompleted: 'keep', graph: KWARGS },
        content: 'run of graph "echo"',
      },
      scope,
    );
    // Due at 10:00:00 (created at it) and 10:00:01: each fired once over two passes.
    b.advance(1000);
    await b.runner.tick();
    await b.runner.tick();
    const due = ['2026-05-01T10:00:00.000Z', '2026-05-01T10:00:01.000Z'];
    expect(b.graphSends).toEqual(
      due.map((iso) => ({
        sessionId: firingSessionId(schedule.id, new Date(iso)),
        scope,
        kwargs: KWARGS,
        idempotencyKey: `schedule:${schedule.id}:${iso}`,
        multitaskStrategy: 'enqueue',
      })),
    );
    const [sent] = b.graphSends;
    expect(sent?.sessionId).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-5[0-9a-f]{3}-[89ab][0-9a-f]{3}-/);
    expect(await b.storage.sessions.get(sent?.sessionId ?? '', scope)).not.toBeNull();
    const fires = await b.storage.schedules.listFires(schedule.id, scope, 10);
    expect(fires.map((f) => f.runId).sort()).toEqual(['run-1', 'run-2']);
    expect(fires.every((f) => f.cleanup === 'none')).toBe(true);
  });

  it('refuses a graph the server does not have, naming the field, storing nothing', async () => {
    const b = await bed();
    await expect(
      b.service.create(
        {
          expression: '* * * * *',
          target: { kind: 'new_session', graph: { ...KWARGS, graph_id: 'nope' } },
          content: 'x',
        },
        {},
      ),
    ).rejects.toThrow('target.graph.graph_id: no graph "nope"');
    expect((await b.storage.schedules.list({}, {})).total).toBe(0);
  });
});
