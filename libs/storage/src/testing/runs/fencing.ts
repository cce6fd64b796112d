import type { AgentEvent, AgentEventEnvelope, Run } from '@cognition/contracts';
import { AIMessage, HumanMessage } from '@langchain/core/messages';
import { isRunFenced, RUN_FENCE_KEY } from '../../domains/runs';
import type { RunFence } from '../../domains/runs';
import type { SuiteContext } from '../context';
import { latestCheckpoint, putMessagesCheckpoint } from '../helpers';

const at = (ms: number) => new Date(Date.UTC(2030, 0, 1) + ms);

function envelope(run: Run, seq: number, event?: AgentEvent): AgentEventEnvelope {
  return {
    id: `${run.id}:${String(seq).padStart(9, '0')}`,
    sessionId: run.sessionId,
    runId: run.id,
    at: new Date(Date.UTC(2026, 2, 4) + seq * 1000).toISOString(),
    event: event ?? { type: 'token', content: `t${seq}` },
  };
}

/**
 * Run fencing: a node that lost its claim on a run (its lease expired and another claim took
 * the run) may still try to store what it had in flight. Every write made under a claim carries
 * it (`RunFence`: node and claim number) and is stored only while the run is held under exactly
 * that claim.
 */
export function fencingTests(ctx: SuiteContext): void {
  describe('run fencing', () => {
    /** A run claimed by node-a (claim 1), then taken over by node-b (claim 2). */
    const takenOver = async () => {
      const session = await ctx.backend.sessions.create({}, {});
      const { run } = await ctx.backend.runs.create({ sessionId: session.id });
      const first = await ctx.backend.runs.claim(run.id, 'node-a', at(0), at(1000));
      const second = await ctx.backend.runs.claim(run.id, 'node-b', at(2000), at(20_000));
      expect([first, second]).toEqual([1, 2]);
      const stale: RunFence = { runId: run.id, ownerNode: 'node-a', claim: 1 };
      const current: RunFence = { runId: run.id, ownerNode: 'node-b', claim: 2 };
      return { run, stale, current };
    };

    it('a write under a superseded claim is refused and stores nothing', async () => {
      const { run, stale, current } = await takenOver();
      const done: AgentEvent = { type: 'done', assistant_data: null };
      // The stale node's late events (its `done` among them) and its run update.
      expect(
        await ctx.backend.events.append(
          [envelope(run, 1), envelope(run, 2, done)],
          { sessionIds: [run.sessionId], keep: 100 },
          [stale],
        ),
      ).toEqual([run.id]);
      const refusal = ctx.backend.runs.update(
        run.id,
        { status: 'completed', finishedAt: at(3000), usage: null },
        stale,
      );
      await expect(refusal).rejects.toMatchObject({ code: 'CONFLICT' });
      expect(isRunFenced(await refusal.catch((error: unknown) => error))).toBe(true);
      expect((await ctx.backend.events.listAfter(run.sessionId, undefined, 10)).events).toEqual([]);
      expect(await ctx.backend.runs.get(run.id)).toMatchObject({
        status: 'queued',
        finishedAt: null,
        ownerNode: 'node-b',
      });
      // The new owner's writes under the same ids are stored.
      const mine = [
        envelope(run, 1, { type: 'token', content: 'new owner' }),
        envelope(run, 2, done),
      ];
      expect(await ctx.backend.events.append(mine, undefined, [current])).toEqual([]);
      expect((await ctx.backend.events.listAfter(run.sessionId, undefined, 10)).events).toEqual(
        mine,
      );
      expect(
        await ctx.backend.runs.update(
          run.id,
          { status: 'completed', finishedAt: at(4000) },
          current,
        ),
      ).toMatchObject({ status: 'completed' });
      // Retried after the end, the stale write is still refused.
      await expect(
        ctx.backend.runs.update(run.id, { status: 'failed' }, stale),
      ).rejects.toMatchObject({ code: 'CONFLICT' });
      expect((await ctx.backend.runs.get(run.id))?.status).toBe('completed');
    });

    it('refuses only the fenced-out runs of a batch; writes without a fence are unconditional', async () => {
      const { run, stale } = await takenOver();
      const session = await ctx.backend.sessions.create({}, {});
      const { run: other } = await ctx.backend.runs.create({ sessionId: session.id });
      const held = await ctx.backend.runs.claim(other.id, 'node-a', at(0), at(60_000));
      const fence: RunFence = { runId: other.id, ownerNode: 'node-a', claim: held ?? -1 };
      const batch = [envelope(run, 1), envelope(other, 1), envelope(other, 2)];
      expect(await ctx.backend.events.append(batch, undefined, [fence, stale])).toEqual([run.id]);
      expect((await ctx.backend.events.listAfter(session.id, undefined, 10)).events).toEqual(
        batch.slice(1),
      );
      expect((await ctx.backend.events.listAfter(run.sessionId, undefined, 10)).events).toEqual([]);
      // No fence: stored whoever holds the run (one node, or a write that is not an executor's).
      expect(await ctx.backend.events.append([envelope(run, 3)])).toEqual([]);
      expect((await ctx.backend.events.listAfter(run.sessionId, undefined, 10)).events).toEqual([
        envelope(run, 3),
      ]);
    });

    it('a claim by the same node fences out its earlier claim (an execution it started before)', async () => {
      const session = await ctx.backend.sessions.create({}, {});
      const { run } = await ctx.backend.runs.create({ sessionId: session.id });
      expect(await ctx.backend.runs.claim(run.id, 'node-a', at(0), at(1000))).toBe(1);
      expect(await ctx.backend.runs.claim(run.id, 'node-a', at(2000), at(20_000))).toBe(2);
      const earlier: RunFence = { runId: run.id, ownerNode: 'node-a', claim: 1 };
      expect(await ctx.backend.events.append([envelope(run, 1)], undefined, [earlier])).toEqual([
        run.id,
      ]);
      await expect(
        ctx.backend.runs.update(run.id, { status: 'running' }, earlier),
      ).rejects.toMatchObject({ code: 'CONFLICT' });
      expect(await ctx.backend.runs.get(run.id)).toMatchObject({ status: 'queued' });
      // Renewing a lease is not a claim: the fence of claim 2 still holds after it.
      expect(await ctx.backend.runs.renewLease(run.id, 'node-a', at(40_000))).toBe(true);
      expect(
        await ctx.backend.runs.update(
          run.id,
          { status: 'running' },
          { runId: run.id, ownerNode: 'node-a', claim: 2 },
        ),
      ).toMatchObject({ status: 'running' });
    });

    it('refuses a checkpoint (and its message projection) and pending writes under a superseded claim', async () => {
      const { run, stale, current } = await takenOver();
      const session = await ctx.backend.sessions.get(run.sessionId, {});
      const threadId = session?.threadId ?? '';
      const hi = new HumanMessage({ id: 'm-hi', content: 'hi' });
      const base = await putMessagesCheckpoint(ctx.backend, threadId, [hi]);
      const answer = (content: string) => new AIMessage({ id: `m-${content}`, content });
      const staleRoot = putMessagesCheckpoint(ctx.backend, threadId, [hi, answer('stale')], {
        parentId: base,
        fence: stale,
      });
      await expect(staleRoot).rejects.toMatchObject({ code: 'CONFLICT', fenced: true });
      // A subgraph's namespace (no projection) is fenced as well.
      await expect(
        putMessagesCheckpoint(ctx.backend, threadId, [hi, answer('sub')], {
          namespace: 'tools:1',
          fence: stale,
        }),
      ).rejects.toMatchObject({ fenced: true });
      const writesConfig = (fence: RunFence) => ({
        configurable: {
          thread_id: threadId,
          checkpoint_ns: '',
          checkpoint_id: base,
          [RUN_FENCE_KEY]: fence,
        },
      });
      await expect(
        ctx.backend.checkpointer.putWrites(writesConfig(stale), [['messages', 'x']], 'task-1'),
      ).rejects.toMatchObject({ fenced: true });
      const tuple = await latestCheckpoint(ctx.backend, threadId);
      expect(tuple?.checkpoint.id).toBe(base);
      expect(tuple?.pendingWrites ?? []).toEqual([]);
      expect(
        await ctx.backend.checkpointer.getTuple({
          configurable: { thread_id: threadId, checkpoint_ns: 'tools:1' },
        }),
      ).toBeUndefined();
      expect((await ctx.backend.messages.listAll(run.sessionId, {})).map((m) => m.content)).toEqual(
        ['hi'],
      );
      // Under the claim that holds the run: stored, projected.
      await ctx.backend.checkpointer.putWrites(
        writesConfig(current),
        [['messages', 'y']],
        'task-2',
      );
      const head = await putMessagesCheckpoint(ctx.backend, threadId, [hi, answer('new')], {
        parentId: base,
        fence: current,
      });
      expect((await latestCheckpoint(ctx.backend, threadId))?.checkpoint.id).toBe(head);
      expect((await ctx.backend.messages.listAll(run.sessionId, {})).map((m) => m.content)).toEqual(
        ['hi', 'new'],
      );
    });

    it('tells the claim a run is held under, and stores a callback only under it', async () => {
      const { run, stale, current } = await takenOver();
      expect(await ctx.backend.runs.fenceOf(run.id)).toEqual(current);
      expect(await ctx.backend.runs.fenceOf('missing-run')).toBeNull();
      const unowned = await ctx.backend.runs.create({
        sessionId: (await ctx.backend.sessions.create({}, {})).id,
      });
      expect(await ctx.backend.runs.fenceOf(unowned.run.id)).toBeNull();
      const delivery = (deliveryId: string) => ({
        deliveryId,
        runId: run.id,
        url: 'https://example.com/hook',
        body: '{}',
        headers: {},
        attempts: 0,
        nextAttemptAt: at(5000),
      });
      // The stale node ended the run too (its end refused): its callback must not go out.
      const refusal = ctx.backend.runs.savePendingCallback(delivery(`${run.id}-stale`), stale);
      await expect(refusal).rejects.toMatchObject({ code: 'CONFLICT', fenced: true });
      await ctx.backend.runs.update(run.id, { status: 'completed', finishedAt: at(4000) }, current);
      await ctx.backend.runs.savePendingCallback(delivery(`${run.id}-current`), current);
      expect(
        (await ctx.backend.runs.listPendingCallbacks())
          .filter((d) => d.runId === run.id)
          .map((d) => d.deliveryId),
      ).toEqual([`${run.id}-current`]);
    });

    it('lets exactly the winner of concurrent claims write under its fence', async () => {
      const session = await ctx.backend.sessions.create({}, {});
      const { run } = await ctx.backend.runs.create({ sessionId: session.id });
      await ctx.backend.runs.claim(run.id, 'dead', at(0), at(1000));
      const nodes = ['n1', 'n2', 'n3'];
      const claims = await Promise.all(
        nodes.map((node) => ctx.backend.runs.claim(run.id, node, at(5000), at(60_000))),
      );
      const refused = await Promise.all(
        nodes.map((node, i) =>
          ctx.backend.events.append([envelope(run, i + 1)], undefined, [
            { runId: run.id, ownerNode: node, claim: claims[i] ?? 2 },
          ]),
        ),
      );
      const winner = claims.findIndex((claim) => claim !== null);
      expect(refused.filter((ids) => ids.length === 0)).toHaveLength(1);
      expect(refused[winner]).toEqual([]);
      expect((await ctx.backend.events.listAfter(session.id, undefined, 10)).events).toEqual([
        envelope(run, winner + 1),
      ]);
    });
  });
}
