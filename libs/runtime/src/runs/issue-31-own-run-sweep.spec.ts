import type { TestRuntime } from '../testing/test-runtime';
import { createTestRuntime } from '../testing/test-runtime';
import { ScriptedChatModel } from '../testing/scripted-chat-model';

const LEASE_MS = 300;

/**
 * Issue 31, found by the chaos run: a node's periodic sweep took over a run of its own that its
 * scheduler was still starting (created with this node's claim, not executing yet), because a
 * run claimed by this node's id counted as claimable; the scheduler then executed it too, and
 * the two executions on one node wrote one run's events and answer (a repeated token, `done`
 * without its answer). Only the startup recovery may take this node's id's runs at once.
 */
describe('issue 31: the sweep leaves a run this node is starting alone', () => {
  let rt: TestRuntime;
  afterEach(async () => {
    await rt.cleanup();
  });

  it('does not take a run claimed by this node that is not executing here yet', async () => {
    const model = new ScriptedChatModel([{ text: 'taken twice' }]);
    rt = await createTestRuntime({
      chatModel: model,
      extra: { cluster: { nodeId: 'node-a', leaseMs: LEASE_MS } },
    });
    await rt.runs.recover(); // the startup recovery; the periodic sweep starts
    const session = await rt.createSession();
    const message = await rt.storage.messages.create({
      sessionId: session.id,
      role: 'user',
      content: 'being started here',
    });
    // As the scheduler leaves it between the write that creates it and its execution.
    const { run } = await rt.storage.runs.create({
      sessionId: session.id,
      status: 'queued',
      inputMessageId: message.id,
    });
    const now = Date.now();
    await rt.storage.runs.claim(run.id, 'node-a', new Date(now), new Date(now + 60_000));

    // Several sweeps (one every half lease).
    await new Promise((resolve) => setTimeout(resolve, LEASE_MS * 4));
    expect(model.calls).toHaveLength(0);
    expect(rt.runs.activeRunIds()).toEqual([]);
    const events = (await rt.log.readAfter(session.id)).events.map((e) => e.event.type);
    expect(events).not.toContain('resumed');
  });
});
