import type { AgentEventEnvelope, Session } from '@cognition/contracts';
import type { StorageBackend } from '@cognition/storage';
import { createMemoryStorage } from '@cognition/storage-memory';
import type { CompletionPayload } from '../callbacks/callback-dispatcher';
import { RuntimeError } from '../errors';
import { InMemoryEventLog } from '../events/event-log';
import { newRunId } from '../ids';
import { silentLogger } from '../logger';
import { UsageMeter } from '../providers/usage';
import { ActiveRuns } from './coordination/active-runs';
import { InProcessRunControl } from './coordination/in-process-run-control';
import type { Outcome } from '../run-outcome';
import { RunFinisher } from './run-finisher';

describe('RunFinisher', () => {
  let storage: StorageBackend;
  let log: InMemoryEventLog;
  let session: Session;
  let dispatched: { url: string; payload: CompletionPayload }[];
  let active: ActiveRuns;

  beforeEach(async () => {
    storage = createMemoryStorage();
    await storage.initialize();
    log = new InMemoryEventLog();
    session = await storage.sessions.create({ agentName: 'default', config: {} }, {});
    dispatched = [];
    active = new ActiveRuns(new InProcessRunControl(), log, silentLogger);
  });
  afterEach(() => storage.close());

  async function finishRun(
    outcome: Outcome,
    meter: UsageMeter | null = null,
    changeCallback?: (runId: string) => Promise<unknown>,
    lastAssistantId: string | null = null,
  ) {
    const { run } = await storage.runs.create({
      id: newRunId(),
      sessionId: session.id,
      status: 'running',
      callbackUrl: 'https://example.com/hook',
    });
    await changeCallback?.(run.id);
    const activeRun = active.add(run.id, session.id, {});
    // The log must hold the terminal event when the run is reported finished.
    let terminalLogged = false;
    const off = log.subscribe(session.id, (e: AgentEventEnvelope) => {
      if (e.event.type === 'done' || e.event.type === 'error') terminalLogged = true;
    });
    const seenAtFinish: boolean[] = [];
    const finisher = new RunFinisher(
      storage,
      {
        dispatch: (url, payload) => {
          dispatched.push({ url, payload });
          return Promise.resolve();
        },
      },
      silentLogger,
      (finished) => seenAtFinish.push(finished.runId === run.id && terminalLogged),
    );
    // The session as a send reads it when the run starts.
    const started = (await storage.sessions.get(session.id, {})) ?? session;
    await finisher.finish(activeRun, started, {
      outcome,
      meter,
      lastAssistantId,
      callbackUrl: 'https://example.com/hook',
    });
    off();
    const events = (await log.readAfter(session.id)).events
      .filter((e) => e.runId === run.id)
      .map((e) => e.event);
    return { run: await storage.runs.get(run.id), events, seenAtFinish };
  }

  it('records a completed run, emits usage, idle and done, then reports it finished', async () => {
    const meter = new UsageMeter('fake', 'fake-model', null);
    meter.add({ input_tokens: 10, output_tokens: 5 }, () => ({ input: 0, output: 0 }));
    const { run, events, seenAtFinish } = await finishRun({ kind: 'completed' }, meter);
    expect(events.map((e) => e.type)).toEqual(['usage', 'status', 'done']);
    expect(run?.status).toBe('completed');
    expect(run?.usage).toMatchObject({ inputTokens: 10, outputTokens: 5 });
    expect(seenAtFinish).toEqual([true]);
    expect(dispatched.map((d) => [d.url, d.payload.status])).toEqual([
      ['https://example.com/hook', 'completed'],
    ]);
  });

  it('retries the read of the answer for done while the database is away (a restart)', async () => {
    const answer = await storage.messages.create({
      sessionId: session.id,
      role: 'assistant',
      content: 'the answer',
    });
    const get = storage.messages.get.bind(storage.messages);
    let failures = 2;
    jest.spyOn(storage.messages, 'get').mockImplementation((...args) => {
      if (failures > 0) {
        failures -= 1;
        return Promise.reject(new Error('database unavailable'));
      }
      return get(...args);
    });
    const { events } = await finishRun({ kind: 'completed' }, null, undefined, answer.id);
    expect(failures).toBe(0);
    expect(events.at(-1)).toMatchObject({
      type: 'done',
      assistant_data: { id: answer.id, content: 'the answer' },
    });
  });

  it('gives each unsuccessful outcome its error event and run error', async () => {
    const aborted = await finishRun({ kind: 'aborted' });
    expect(aborted.events[1]).toMatchObject({ type: 'error', code: 'ABORTED' });
    expect(aborted.run).toMatchObject({ status: 'aborted', error: null });
    const interrupted = await finishRun({ kind: 'interrupted' });
    expect(interrupted.events[1]).toMatchObject({ type: 'error', code: 'UNAVAILABLE' });
    expect(interrupted.run?.error?.code).toBe('UNAVAILABLE');
    const failed = await finishRun({
      kind: 'failed',
      error: new RuntimeError('TIMEOUT', 'too many steps'),
    });
    expect(failed.events[1]).toEqual({ type: 'error', code: 'TIMEOUT', message: 'too many steps' });
    expect(failed.run?.error).toEqual({ code: 'TIMEOUT', message: 'too many steps' });
    expect(dispatched.map((d) => d.payload.status)).toEqual(['aborted', 'interrupted', 'failed']);
  });

  it('sends the payload where the stored callback URL of the run points when it ends', async () => {
    await finishRun({ kind: 'completed' }, null, (id) =>
      storage.runs.update(id, { callbackUrl: 'https://example.com/moved' }),
    );
    await finishRun({ kind: 'completed' }, null, (id) =>
      storage.runs.update(id, { callbackUrl: null }),
    );
    expect(dispatched.map((d) => d.url)).toEqual(['https://example.com/moved']);
  });

  it('moves the session to error after a failure and back after a success, never from suspended', async () => {
    const status = async () => (await storage.sessions.get(session.id, {}))?.status;
    await finishRun({ kind: 'failed', error: new RuntimeError('INTERNAL_ERROR', 'x') });
    expect(await status()).toBe('error');
    await finishRun({ kind: 'completed' });
    expect(await status()).toBe('active');
    await storage.sessions.update(session.id, { status: 'suspended' }, {});
    await finishRun({ kind: 'failed', error: new RuntimeError('INTERNAL_ERROR', 'x') });
    expect(await status()).toBe('suspended');
  });

  it('leaves a session an operator suspended or completed during the run as it is', async () => {
    const status = async () => (await storage.sessions.get(session.id, {}))?.status;
    // The run starts on an active session; the operator acts before it ends.
    const finishAfter = async (operator: 'suspended' | 'completed', outcome: Outcome) => {
      await storage.sessions.update(session.id, { status: 'active' }, {});
      const started = await storage.sessions.get(session.id, {});
      await storage.sessions.update(session.id, { status: operator }, {});
      const { run } = await storage.runs.create({
        id: newRunId(),
        sessionId: session.id,
        status: 'running',
      });
      const finisher = new RunFinisher(
        storage,
        { dispatch: () => Promise.resolve() },
        silentLogger,
        () => undefined,
      );
      await finisher.finish(active.add(run.id, session.id, {}), started ?? session, {
        outcome,
        meter: null,
        lastAssistantId: null,
        callbackUrl: null,
      });
    };
    await finishAfter('suspended', { kind: 'completed' });
    expect(await status()).toBe('suspended');
    await finishAfter('completed', {
      kind: 'failed',
      error: new RuntimeError('INTERNAL_ERROR', 'x'),
    });
    expect(await status()).toBe('completed');
  });
});
