import type { Run } from '@cognition/contracts';
import { context, trace } from '@opentelemetry/api';
import { AsyncLocalStorageContextManager } from '@opentelemetry/context-async-hooks';
import {
  InMemorySpanExporter,
  SimpleSpanProcessor,
  TracerProvider,
} from '@opentelemetry/sdk-trace';
import { createMemoryStorage } from '@cognition/storage-memory';
import { silentLogger } from '../logger';
import type { SendInput, SendResult } from '../runs/admission/send-input';
import { ScheduleRunner } from './schedule-runner';
import { ScheduleService } from './schedule-service';

/**
 * The span of each firing (`cognition.schedule.fire`, issue 29): due time, lag, outcome —
 * fired, misfire (one coalesced run), skipped, failed — and one span per occurrence however
 * many nodes race for it.
 */
describe('schedule firing spans', () => {
  const exporter = new InMemorySpanExporter();
  const provider = new TracerProvider({ spanProcessors: [new SimpleSpanProcessor({ exporter })] });

  beforeAll(() => {
    context.setGlobalContextManager(new AsyncLocalStorageContextManager().enable());
    trace.setGlobalTracerProvider(provider);
  });
  afterAll(async () => {
    trace.disable();
    context.disable();
    await provider.shutdown();
  });
  beforeEach(() => exporter.reset());

  async function bed(start: string, refuse = false) {
    const storage = createMemoryStorage();
    await storage.initialize();
    let now = new Date(start);
    const clock = { now: () => new Date(now.getTime()) };
    let runs = 0;
    const send = (input: SendInput): Promise<SendResult> => {
      if (refuse) {
        return Promise.reject(Object.assign(new Error('gone'), { code: 'SESSION_NOT_FOUND' }));
      }
      // The run is created at the clock's now: its lag is now minus the due time.
      const run = { id: `run-${(runs += 1)}`, createdAt: clock.now(), sessionId: input.sessionId };
      return Promise.resolve({ run: run as Run, created: true } as SendResult);
    };
    const runner = (nodeId: string) =>
      new ScheduleRunner({
        storage,
        send,
        deleteSession: () => Promise.resolve(),
        nodeId,
        clock,
        logger: silentLogger,
      });
    const service = new ScheduleService({
      storage,
      runner: runner('api'),
      validateSessionInput: () => Promise.resolve(),
      allowPrivateCallbacks: true,
      clock,
    });
    const advanceTo = (iso: string) => {
      now = new Date(iso);
    };
    return { service, runner, advanceTo };
  }

  const fireSpans = () =>
    exporter.getFinishedSpans().filter((s) => s.name === 'cognition.schedule.fire');

  it('records a firing: due time, lag, outcome, run; one span for three racing nodes', async () => {
    const b = await bed('2026-05-01T10:00:00.200Z');
    const s = await b.service.create(
      { expression: '* * * * * *', target: { kind: 'new_session' }, content: 'tick' },
      {},
    );
    b.advanceTo('2026-05-01T10:00:01.500Z');
    const nodes = [b.runner('a'), b.runner('b'), b.runner('c')];
    await Promise.all(nodes.map((n) => n.tick()));
    const spans = fireSpans();
    expect(spans).toHaveLength(1);
    expect(spans[0]?.attributes).toMatchObject({
      'cognition.schedule.id': s.id,
      'cognition.schedule.due_at': '2026-05-01T10:00:01.000Z',
      'cognition.schedule.reason': 'scheduled',
      'cognition.schedule.outcome': 'fired',
      'cognition.schedule.lag_ms': 500,
      'cognition.run.id': 'run-1',
    });
    expect(['a', 'b', 'c']).toContain(spans[0]?.attributes['cognition.node.id']);
    expect(spans[0]?.status.code).not.toBe(2);
  });

  it('marks a coalesced misfire, a skipped one and a refused firing', async () => {
    for (const [misfire, outcome] of [
      ['run_once', 'misfire'],
      ['skip', 'skipped'],
    ] as const) {
      exporter.reset();
      const b = await bed('2026-05-01T10:00:30Z');
      await b.service.create(
        { expression: '* * * * *', target: { kind: 'new_session' }, content: 'm', misfire },
        {},
      );
      b.advanceTo('2026-05-01T10:15:10Z'); // every node was down for 15 due minutes
      await b.runner('a').tick();
      const spans = fireSpans();
      expect(spans.map((x) => x.attributes['cognition.schedule.outcome'])).toEqual([outcome]);
      expect(spans[0]?.attributes['cognition.schedule.reason']).toBe('misfire');
      expect(spans[0]?.attributes['cognition.schedule.due_at']).toBe('2026-05-01T10:01:00.000Z');
    }
    exporter.reset();
    const b = await bed('2026-05-01T10:00:00Z', true);
    await b.service.create({ afterSeconds: 1, target: { kind: 'new_session' }, content: 'x' }, {});
    b.advanceTo('2026-05-01T10:00:01.100Z');
    await b.runner('a').tick();
    const [failed] = fireSpans();
    expect(failed?.attributes['cognition.schedule.outcome']).toBe('failed');
    expect(failed?.status.code).toBe(2); // SpanStatusCode.ERROR
  });
});
