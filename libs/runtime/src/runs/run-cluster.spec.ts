import type { TestRuntime } from '../testing/test-runtime';
import { anotherManager, collect, createTestRuntime, waitFor } from '../testing/test-runtime';
import { ScriptedChatModel } from '../testing/scripted-chat-model';
import type { RunManager } from './run-manager';

const LEASE_MS = 300;
/**
 * A lease no renewal misses even on a starved machine: the tests that need the owner's renewals
 * (or a dead node's lease) to hold use it, since a 300 ms lease lapsed there and a takeover was
 * then the right answer, not a bug.
 */
const HELD_LEASE_MS = 2000;

/**
 * Two nodes on one database: `rt.runs` is node A, `nodeB` a second manager on the same storage
 * and event log (the log stands for the cluster's shared fan-out).
 */
describe('run ownership by lease (several nodes)', () => {
  let rt: TestRuntime;
  let nodeB: RunManager | undefined;
  afterEach(async () => {
    await nodeB?.shutdown(100);
    nodeB = undefined;
    await rt.cleanup();
  });

  const secondNode = (model: ScriptedChatModel, leaseMs = LEASE_MS) =>
    anotherManager(rt, model, { cluster: { nodeId: 'node-b', leaseMs } });

  it('never takes over a run whose owner renews its lease (no step requested twice)', async () => {
    const model = new ScriptedChatModel([{ text: 'working', hang: true }]);
    rt = await createTestRuntime({
      chatModel: model,
      extra: { cluster: { nodeId: 'node-a', leaseMs: HELD_LEASE_MS } },
    });
    await rt.runs.recover(); // starts node A's cluster duties
    const session = await rt.createSession();
    const { run } = await rt.runs.scheduler.send({
      sessionId: session.id,
      scope: {},
      content: 'go',
    });
    await waitFor(() => model.calls.length === 1);
    expect(await rt.storage.runs.get(run.id)).toMatchObject({ ownerNode: 'node-a' });

    nodeB = secondNode(model, HELD_LEASE_MS);
    await nodeB.recover();
    // Several lease periods: B sweeps every half lease, A renews every third.
    await new Promise((resolve) => setTimeout(resolve, HELD_LEASE_MS * 3));
    expect(model.calls).toHaveLength(1);
    expect(nodeB.activeRunIds()).toEqual([]);
    expect(await rt.storage.runs.get(run.id)).toMatchObject({
      ownerNode: 'node-a',
      status: 'running',
    });
    await rt.runs.abort(session.id, {});
  });

  it('takes over the run of a node that stopped renewing, once its lease ran out', async () => {
    let calledAt = 0;
    const model = new ScriptedChatModel([
      () => {
        calledAt = Date.now();
        return { text: 'after takeover' };
      },
    ]);
    rt = await createTestRuntime({ chatModel: model });
    const session = await rt.createSession();
    const message = await rt.storage.messages.create({
      sessionId: session.id,
      role: 'user',
      content: 'left by a dead node',
    });
    const { run } = await rt.storage.runs.create({
      sessionId: session.id,
      status: 'running',
      inputMessageId: message.id,
    });
    const now = Date.now();
    const deadUntil = now + HELD_LEASE_MS;
    await rt.storage.runs.claim(run.id, 'dead-node', new Date(now), new Date(deadUntil));

    nodeB = secondNode(model);
    const startup = await nodeB.recover();
    expect(startup.resumed).toEqual([]); // the dead node's lease still holds
    // B's sweep (every half of its lease) takes the run once the dead node's lease ran out.
    await waitFor(
      async () => (await rt.storage.runs.get(run.id))?.status === 'completed',
      HELD_LEASE_MS + 10_000,
    );
    expect(calledAt).toBeGreaterThanOrEqual(deadUntil);
    expect(await rt.storage.runs.get(run.id)).toMatchObject({ ownerNode: 'node-b' });
    const events = await collect(await nodeB.events(session.id, {}, { runId: run.id }));
    expect(events.map((e) => e.event.type)).toContain('resumed');
    expect(events.at(-1)?.event.type).toBe('done');
  });

  it('stops executing a run whose lease another node took, recording nothing', async () => {
    const model = new ScriptedChatModel([{ text: 'partial', hang: true }]);
    rt = await createTestRuntime({
      chatModel: model,
      extra: { cluster: { nodeId: 'node-a', leaseMs: LEASE_MS } },
    });
    await rt.runs.recover();
    const session = await rt.createSession();
    const { run } = await rt.runs.scheduler.send({
      sessionId: session.id,
      scope: {},
      content: 'go',
    });
    await waitFor(() => model.calls.length === 1);
    // Node A was partitioned: its lease expired and node C claimed the run.
    const later = new Date(Date.now() + 60_000);
    expect(
      await rt.storage.runs.claim(run.id, 'node-c', later, new Date(later.getTime() + 1)),
    ).toEqual(expect.any(Number));
    await waitFor(() => rt.runs.activeRunIds().length === 0, 3000);
    expect(await rt.storage.runs.get(run.id)).toMatchObject({
      status: 'running',
      ownerNode: 'node-c',
      finishedAt: null,
    });
    const events = (await rt.log.readAfter(session.id)).events.map((e) => e.event.type);
    expect(events).not.toContain('done');
    expect(events).not.toContain('error');
  });

  it('leaves a run it has no slot for to a node that has one', async () => {
    const model = new ScriptedChatModel([{ text: 'busy', hang: true }, { text: 'adopted' }]);
    rt = await createTestRuntime({
      chatModel: model,
      extra: { cluster: { nodeId: 'node-a', leaseMs: LEASE_MS }, maxConcurrentRuns: 1 },
    });
    await rt.runs.recover();
    const busy = await rt.createSession();
    await rt.runs.scheduler.send({ sessionId: busy.id, scope: {}, content: 'keep node a busy' });
    await waitFor(() => model.calls.length === 1);
    const waiting = await rt.createSession();
    const { run } = await rt.runs.scheduler.send({
      sessionId: waiting.id,
      scope: {},
      content: 'next',
    });
    expect(await rt.storage.runs.get(run.id)).toMatchObject({ status: 'queued', ownerNode: null });

    nodeB = secondNode(model);
    await nodeB.recover();
    const events = await collect(await rt.runs.events(waiting.id, {}, { runId: run.id }));
    expect(events.map((e) => e.event.type)).not.toContain('resumed');
    expect(events.at(-1)?.event.type).toBe('done');
    expect(await rt.storage.runs.get(run.id)).toMatchObject({
      status: 'completed',
      ownerNode: 'node-b',
    });
    await rt.runs.abort(busy.id, {});
  });
});
