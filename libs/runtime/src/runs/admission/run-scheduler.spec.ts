import type { StorageBackend } from '@cognition/storage';
import { createMemoryStorage } from '@cognition/storage-memory';
import { InMemoryEventLog } from '../../events/event-log';
import { silentLogger } from '../../logger';
import { ActiveRuns } from '../coordination/active-runs';
import { InProcessRunControl } from '../coordination/in-process-run-control';
import type { ActiveRun } from '../run-context';
import type { RunInput } from '../execution/run-executor';
import { RunLeases } from '../coordination/run-leases';
import { RunScheduler } from './run-scheduler';
import { AgentRegistry } from '../../agents/registry';
import { ProviderRegistry } from '../../providers/registry';
import { ConfigRegistry } from '../../registry/config-registry';

describe('RunScheduler', () => {
  let storage: StorageBackend;
  let active: ActiveRuns;
  let started: { run: ActiveRun; input: RunInput }[];
  let scheduler: RunScheduler;

  beforeEach(async () => {
    storage = createMemoryStorage();
    await storage.initialize();
    const control = new InProcessRunControl();
    active = new ActiveRuns(control, new InMemoryEventLog(), silentLogger);
    started = [];
    scheduler = new RunScheduler({
      storage,
      active,
      // Never finishes: the run stays active, as while its turn executes.
      executor: {
        execute: (run, input) => {
          started.push({ run, input });
          return new Promise<void>(() => undefined);
        },
      },
      control,
      leases: new RunLeases(storage, null, active, silentLogger),
      logger: silentLogger,
      allowPrivateCallbacks: true,
      registry: new ConfigRegistry({
        agents: new AgentRegistry(),
        providers: new ProviderRegistry({}),
        store: storage.registry,
      }),
    });
  });
  afterEach(() => storage.close());

  const newSession = () => storage.sessions.create({ agentName: 'default', config: {} }, {});

  it('persists the user message, creates the run queued and hands both to the executor', async () => {
    const session = await newSession();
    const result = await scheduler.send({ sessionId: session.id, scope: {}, content: 'hi' });
    expect(result.created).toBe(true);
    expect(result.run).toMatchObject({ status: 'queued', inputMessageId: result.message.id });
    expect(
      started.map((s) => [s.run.runId, 'userMessage' in s.input && s.input.userMessage.id]),
    ).toEqual([[result.run.id, result.message.id]]);
    expect(active.forSession(session.id)?.runId).toBe(result.run.id);
  });

  it('lets one of two concurrent sends in and leaves no orphan message for the other', async () => {
    const session = await newSession();
    const outcomes = await Promise.allSettled([
      scheduler.send({ sessionId: session.id, scope: {}, content: 'a' }),
      scheduler.send({ sessionId: session.id, scope: {}, content: 'b' }),
    ]);
    expect(outcomes.map((o) => o.status).sort()).toEqual(['fulfilled', 'rejected']);
    const rejected = outcomes.find((o) => o.status === 'rejected');
    expect(rejected?.reason).toMatchObject({ code: 'RUN_IN_PROGRESS' });
    expect(await storage.messages.listAll(session.id, {})).toHaveLength(1);
    expect(started).toHaveLength(1);
  });

  it('refuses sends with typed errors: bad input, unknown session, other scope, shutting down', async () => {
    const session = await newSession();
    await expect(
      scheduler.send({ sessionId: session.id, scope: {}, content: '' }),
    ).rejects.toMatchObject({ code: 'VALIDATION_ERROR', issues: [{ path: 'content' }] });
    await expect(
      scheduler.send({ sessionId: session.id, scope: { tenant: 'b' }, content: 'x' }),
    ).rejects.toMatchObject({ code: 'SESSION_NOT_FOUND' });
    scheduler.stopAccepting();
    await expect(
      scheduler.send({ sessionId: session.id, scope: {}, content: 'x' }),
    ).rejects.toMatchObject({ code: 'UNAVAILABLE' });
    expect(started).toEqual([]);
  });
});
