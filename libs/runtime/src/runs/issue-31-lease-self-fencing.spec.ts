import type { TestRuntime } from '../testing/test-runtime';
import { createTestRuntime, waitFor } from '../testing/test-runtime';
import { ScriptedChatModel } from '../testing/scripted-chat-model';

const LEASE_MS = 300;

/**
 * Issue 31, found by the chaos run: during a PostgreSQL restart longer than the lease, a node
 * could not renew the leases of its runs and went on executing them; once the database was back,
 * another node took the expired runs over while the first still executed them (two nodes
 * streaming one answer, the answer stored twice or not at all). A node that cannot renew a lease
 * now stops executing the run before the lease can expire, records nothing, and leaves it to
 * whoever claims it next.
 */
describe('issue 31: a node that cannot renew a lease stops before it expires', () => {
  let rt: TestRuntime;
  afterEach(async () => {
    jest.restoreAllMocks();
    await rt.cleanup();
  });

  it('stops executing when storage is unreachable for a lease; a claimant resumes it', async () => {
    const model = new ScriptedChatModel([{ text: 'working', hang: true }, { text: 'resumed' }]);
    rt = await createTestRuntime({
      chatModel: model,
      extra: { cluster: { nodeId: 'node-a', leaseMs: LEASE_MS } },
    });
    await rt.runs.recover(); // starts node A's cluster duties (renewals and the sweep)
    const session = await rt.createSession();
    const { run } = await rt.runs.scheduler.send({
      sessionId: session.id,
      scope: {},
      content: 'go',
    });
    await waitFor(() => model.calls.length === 1);
    // Renewals fail (the database is unreachable for them); claims still work, so the sweep
    // that finds the expired lease claims the run and resumes it — here, on the same node.
    const renewals = jest
      .spyOn(rt.storage.runs, 'renewLease')
      .mockRejectedValue(new Error('connection refused'));

    // Before the fix the node went on waiting for the hung model call forever.
    await waitFor(async () => (await rt.storage.runs.get(run.id))?.status === 'completed', 10_000);
    expect(renewals).toHaveBeenCalled();
    expect(model.calls).toHaveLength(2);
    const events = (await rt.log.readAfter(session.id)).events.map((e) => e.event.type);
    expect(events).toContain('resumed');
    expect(events.filter((type) => type === 'done')).toHaveLength(1);
    expect(events.at(-1)).toBe('done');
    // The answer is the resumed call's: nothing of the cut-off call entered the thread.
    const messages = await rt.storage.messages.listAll(session.id, {});
    expect(messages.filter((m) => m.role === 'assistant').map((m) => m.content)).toEqual([
      'resumed',
    ]);
  });
});
