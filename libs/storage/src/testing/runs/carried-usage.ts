import type { AgentEventEnvelope, Run } from '@cognition/contracts';
import type { RunFence } from '../../domains/runs';
import type { SuiteContext } from '../context';
import { usageOf } from '../usage/usage';

const at = (ms: number) => new Date(Date.UTC(2030, 0, 1) + ms);

function token(run: Run, seq: number): AgentEventEnvelope {
  return {
    id: `${run.id}:${String(seq).padStart(9, '0')}`,
    sessionId: run.sessionId,
    runId: run.id,
    at: new Date(Date.UTC(2026, 2, 4) + seq * 1000).toISOString(),
    event: { type: 'token', content: `t${seq}` },
  };
}

/**
 * `EventStore.append`'s `usage`: the event log's flush carries a running run's usage, stored as
 * `runs.update(runId, { usage }, fence)` stores it (the run and its session's usage records),
 * in the append's write and fenced with the run's events.
 */
export function carriedUsageTests(ctx: SuiteContext): void {
  describe('usage carried by an event append', () => {
    const claimed = async (node: string) => {
      const session = await ctx.backend.sessions.create({}, {});
      const { run } = await ctx.backend.runs.create({ sessionId: session.id });
      const claim = await ctx.backend.runs.claim(run.id, node, at(0), at(60_000));
      const fence: RunFence = { runId: run.id, ownerNode: node, claim: claim ?? -1 };
      const running = await ctx.backend.runs.update(run.id, { status: 'running' }, fence);
      return { run: running, fence };
    };

    it('stores the run’s usage and its session’s usage records with the events, as runs.update', async () => {
      const { run, fence } = await claimed('node-a');
      const first = usageOf('openai', 'gpt-4o', 100, 10, 0.001);
      expect(
        await ctx.backend.events.append(
          [token(run, 1)],
          undefined,
          [fence],
          [{ runId: run.id, usage: first }],
        ),
      ).toEqual([]);
      expect((await ctx.backend.runs.get(run.id))?.usage).toEqual(first);
      expect((await ctx.backend.usage.get(run.sessionId, {}))?.usage).toMatchObject({
        tokensIn: 100,
        tokensOut: 10,
        runs: 1,
      });
      // A later call's figures replace the run's contribution (no double counting), also after
      // another write of the run row (a lease renewal) and with no event to go with them.
      expect(await ctx.backend.runs.renewLease(run.id, 'node-a', at(90_000))).toBe(true);
      const grown = usageOf('openai', 'gpt-4o', 250, 30, 0.003);
      await ctx.backend.events.append([], undefined, [fence], [{ runId: run.id, usage: grown }]);
      expect((await ctx.backend.runs.get(run.id))?.usage).toEqual(grown);
      expect((await ctx.backend.usage.get(run.sessionId, {}))?.usage).toMatchObject({
        tokensIn: 250,
        tokensOut: 30,
        runs: 1,
      });
      expect((await ctx.backend.events.listAfter(run.sessionId, undefined, 10)).events).toEqual([
        token(run, 1),
      ]);
    });

    it('stores the usage of several runs of one append (a node running several)', async () => {
      const a = await claimed('node-a');
      const b = await claimed('node-a');
      const usage = [
        { runId: a.run.id, usage: usageOf('openai', 'gpt-4o', 1, 2, 0) },
        { runId: b.run.id, usage: usageOf('anthropic', 'claude-sonnet-4', 3, 4, 0) },
      ];
      const batch = [token(a.run, 1), token(b.run, 1)];
      expect(await ctx.backend.events.append(batch, undefined, [a.fence, b.fence], usage)).toEqual(
        [],
      );
      expect((await ctx.backend.runs.get(a.run.id))?.usage).toEqual(usage[0]?.usage);
      expect((await ctx.backend.runs.get(b.run.id))?.usage).toEqual(usage[1]?.usage);
      expect((await ctx.backend.usage.get(b.run.sessionId, {}))?.usage).toMatchObject({
        tokensIn: 3,
        tokensOut: 4,
      });
    });

    it('stores no usage of a run whose claim was superseded, and the others’ of the batch', async () => {
      const { run, fence: stale } = await claimed('node-a');
      const next = await ctx.backend.runs.claim(run.id, 'node-b', at(120_000), at(180_000));
      expect(next).toBe(stale.claim + 1);
      const other = await claimed('node-a');
      const usage = [
        { runId: run.id, usage: usageOf('openai', 'gpt-4o', 100, 10, 0.001) },
        { runId: other.run.id, usage: usageOf('openai', 'gpt-4o', 5, 6, 0) },
      ];
      expect(
        await ctx.backend.events.append(
          [token(run, 1), token(other.run, 1)],
          undefined,
          [stale, other.fence],
          usage,
        ),
      ).toEqual([run.id]);
      expect((await ctx.backend.runs.get(run.id))?.usage).toBeNull();
      expect((await ctx.backend.usage.get(run.sessionId, {}))?.usage).toMatchObject({
        tokensIn: 0,
        tokensOut: 0,
      });
      expect((await ctx.backend.events.listAfter(run.sessionId, undefined, 10)).events).toEqual([]);
      expect((await ctx.backend.runs.get(other.run.id))?.usage).toEqual(usage[1]?.usage);
    });
  });
}
