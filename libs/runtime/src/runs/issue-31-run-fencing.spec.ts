import type { AgentEventEnvelope } from '@cognition/contracts';
import { StorageEventLog } from '../events/storage-event-log';
import type { TestRuntime } from '../testing/test-runtime';
import { anotherManager, createTestRuntime, waitFor } from '../testing/test-runtime';
import { ScriptedChatModel } from '../testing/scripted-chat-model';
import type { RunManager } from './run-manager';

const LEASE_MS = 300;
const A_TOKENS = Array.from({ length: 400 }, (_, i) => `a${i + 1} `);

/**
 * Issue 31, run fencing. Node A executes a run and stalls (it stops renewing its lease but goes
 * on executing, as a node does under load or a partition); node B takes the run over once the
 * lease ran out and resumes it. Without fencing, what A emitted afterwards was stored under ids
 * B also uses (the store keeps the first of two equal ids, so either side's event may win, B's
 * `done` among them), and A's run updates were stored too. Every write of A's execution now
 * carries its claim, and storage refuses them once B's claim took the run.
 */
describe('issue 31: a node that lost its claim stores nothing more of the run', () => {
  let rt: TestRuntime;
  let nodeA: RunManager | undefined;
  let nodeB: RunManager | undefined;
  afterEach(async () => {
    jest.restoreAllMocks();
    await nodeA?.shutdown(100);
    await nodeB?.shutdown(100);
    nodeA = nodeB = undefined;
    await rt.cleanup();
  });

  it("drops the stale node's late events; the new owner's events and done are stored", async () => {
    const model = new ScriptedChatModel([
      // A: a long answer, streamed slowly; it is still streaming when B takes the run.
      { text: A_TOKENS, delayMs: 20 },
      // B: the resumed run's answer.
      { text: ['b1 ', 'b2 ', 'b3'] },
    ]);
    rt = await createTestRuntime({ chatModel: model });
    // One durable log on the shared storage (what every node's storage-backed log writes to);
    // each node has its own, as each process does.
    const logA = new StorageEventLog({ store: rt.storage.events, flushIntervalMs: 0 });
    const logB = new StorageEventLog({ store: rt.storage.events, flushIntervalMs: 0 });
    const cluster = (nodeId: string) => ({ nodeId, leaseMs: 1000 });
    // One slot: while A executes the run, its own sweep takes nothing.
    nodeA = anotherManager(rt, model, {
      cluster: cluster('node-a'),
      eventLog: logA,
      maxConcurrentRuns: 1,
    });
    await nodeA.recover();
    const session = await rt.createSession();
    const { run } = await nodeA.scheduler.send({ sessionId: session.id, scope: {}, content: 'go' });
    await waitFor(async () => (await logA.readAfter(session.id)).events.length > 3);
    // From now on A's renewals are answered as stored but never reach the run's row (as when a
    // renewal lands after the lease ran out, or the node's clock runs slow): A believes it holds
    // the run, so its own claim check lets it go on, while the lease in the database lapses.
    // Only the fence can stop what A writes after B's claim.
    const renew = rt.storage.runs.renewLease.bind(rt.storage.runs);
    jest
      .spyOn(rt.storage.runs, 'renewLease')
      .mockImplementation((id, node, until) =>
        node === 'node-a' ? Promise.resolve(true) : renew(id, node, until),
      );

    nodeB = anotherManager(rt, model, { cluster: cluster('node-b'), eventLog: logB });
    await nodeB.recover(); // B's sweep takes the run once A's lease ran out
    await waitFor(async () => (await rt.storage.runs.get(run.id))?.status === 'completed', 15_000);
    // A stops at once: its next append was refused.
    await waitFor(() => nodeA?.activeRunIds().length === 0, 15_000);
    await waitFor(() => model.calls.length === 2);

    const stored = (await logB.readAfter(session.id)).events;
    const types = stored.map((e) => e.event.type);
    // B's `resumed` (A may have resumed the run itself before, had its own check stopped it).
    const resumedAt = types.lastIndexOf('resumed');
    expect(resumedAt).toBeGreaterThan(0);
    // Everything after B's `resumed` is B's: not one token of A (their ids were B's to use).
    const after = stored.slice(resumedAt + 1);
    expect(tokens(after)).toEqual(['b1 ', 'b2 ', 'b3']);
    expect(types.filter((type) => type === 'done')).toHaveLength(1);
    expect(stored.at(-1)?.event).toMatchObject({
      type: 'done',
      assistant_data: { content: 'b1 b2 b3' },
    });
    // A's tokens before the takeover are the ones `resumed` voids; none of A's came later.
    expect(tokens(stored.slice(0, resumedAt)).every((t) => t.startsWith('a'))).toBe(true);
    expect(tokens(stored.slice(0, resumedAt)).length).toBeLessThan(A_TOKENS.length);
    expect(new Set(stored.map((e) => e.id)).size).toBe(stored.length);
    // The run as B ended it; the answer stored once.
    expect(await rt.storage.runs.get(run.id)).toMatchObject({
      status: 'completed',
      ownerNode: 'node-b',
    });
    const answers = (await rt.storage.messages.listAll(session.id, {})).filter(
      (m) => m.role === 'assistant',
    );
    expect(answers.map((m) => m.content)).toEqual(['b1 b2 b3']);
  });

  it('a node whose renewals are late calls nothing more for the run (no tool round, no model call)', async () => {
    // The model call lasts longer than two thirds of the lease; the node renews nothing (its
    // cluster duties never start): by the tool round its claim may have run out.
    const model = new ScriptedChatModel([
      {
        text: ['thinking', ' about', ' it'],
        delayMs: LEASE_MS,
        toolCalls: [{ name: 'execute', args: { command: 'echo late' }, id: 'x1' }],
      },
      { text: 'never asked' },
    ]);
    const commands: string[] = [];
    rt = await createTestRuntime({
      chatModel: model,
      onExecute: (command) => {
        commands.push(command);
        return Promise.resolve({ output: '', exitCode: 0, truncated: false, timedOut: false });
      },
    });
    const log = new StorageEventLog({ store: rt.storage.events, flushIntervalMs: 0 });
    nodeA = anotherManager(rt, model, {
      cluster: { nodeId: 'node-a', leaseMs: LEASE_MS },
      eventLog: log,
    });
    const session = await rt.createSession();
    const { run } = await nodeA.scheduler.send({ sessionId: session.id, scope: {}, content: 'go' });
    await waitFor(() => nodeA?.activeRunIds().length === 0, 15_000);
    expect(commands).toEqual([]);
    expect(model.calls).toHaveLength(1);
    // Left to whoever claims it next: not ended here.
    expect(await rt.storage.runs.get(run.id)).toMatchObject({
      status: 'running',
      finishedAt: null,
    });
    const types = (await log.readAfter(session.id)).events.map((e) => e.event.type);
    expect(types).not.toContain('done');
    expect(types).not.toContain('error');
  });

  it("refuses the stale node's run update: the run is not ended by the node that lost it", async () => {
    const model = new ScriptedChatModel([{ text: 'stale answer', hang: true }]);
    rt = await createTestRuntime({ chatModel: model });
    const log = new StorageEventLog({ store: rt.storage.events, flushIntervalMs: 0 });
    nodeA = anotherManager(rt, model, {
      cluster: { nodeId: 'node-a', leaseMs: 60_000 },
      eventLog: log,
    });
    await nodeA.recover();
    const session = await rt.createSession();
    const { run } = await nodeA.scheduler.send({ sessionId: session.id, scope: {}, content: 'go' });
    await waitFor(() => model.calls.length === 1);
    const before = (await log.readAfter(session.id)).events.length;
    // Another node claims the run (A was partitioned and its lease ran out meanwhile).
    const later = new Date(Date.now() + 120_000);
    expect(
      await rt.storage.runs.claim(run.id, 'node-c', later, new Date(later.getTime() + 60_000)),
    ).toEqual(expect.any(Number));
    // A is told to stop (an abort a person asked for): its end and its terminal events would be
    // written under the claim it no longer holds.
    await nodeA.abort(session.id, {});
    await waitFor(() => nodeA?.activeRunIds().length === 0, 15_000);
    expect(await rt.storage.runs.get(run.id)).toMatchObject({
      status: 'running',
      ownerNode: 'node-c',
      finishedAt: null,
      error: null,
    });
    const events = (await log.readAfter(session.id)).events;
    expect(events.map((e) => e.event.type)).not.toContain('error');
    expect(events.slice(before).map((e) => e.event.type)).not.toContain('status');
  });
});

function tokens(events: readonly AgentEventEnvelope[]): string[] {
  return events.flatMap((e) => (e.event.type === 'token' ? [e.event.content] : []));
}
