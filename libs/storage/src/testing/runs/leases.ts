import type { SuiteContext } from '../context';
import { uid } from '../helpers';

const at = (ms: number) => new Date(Date.UTC(2030, 0, 1) + ms);

/** Run ownership by lease (several nodes on one database). */
export function leaseTests(ctx: SuiteContext): void {
  describe('run leases', () => {
    const activeRun = async () => {
      const session = await ctx.backend.sessions.create({}, {});
      return (await ctx.backend.runs.create({ sessionId: session.id })).run;
    };

    it('lets a node claim an unowned active run and records owner and expiry', async () => {
      const run = await activeRun();
      expect(run).toMatchObject({ ownerNode: null, leaseExpiresAt: null });
      expect(await ctx.backend.runs.claim(run.id, 'node-a', at(0), at(15_000))).toBe(1);
      expect(await ctx.backend.runs.get(run.id)).toMatchObject({
        ownerNode: 'node-a',
        leaseExpiresAt: at(15_000),
      });
      // The owner may claim again (a restart of the same node): a new claim number; others may not.
      expect(await ctx.backend.runs.claim(run.id, 'node-a', at(1000), at(16_000))).toBe(2);
      expect(await ctx.backend.runs.claim(run.id, 'node-b', at(2000), at(17_000))).toBeNull();
      expect((await ctx.backend.runs.get(run.id))?.ownerNode).toBe('node-a');
    });

    it('hands an expired lease to the next claimant, and the old owner can no longer renew', async () => {
      const run = await activeRun();
      await ctx.backend.runs.claim(run.id, 'node-a', at(0), at(15_000));
      expect(await ctx.backend.runs.renewLease(run.id, 'node-a', at(20_000))).toBe(true);
      expect(await ctx.backend.runs.claim(run.id, 'node-b', at(19_999), at(30_000))).toBeNull();
      expect(await ctx.backend.runs.claim(run.id, 'node-b', at(20_001), at(35_000))).toBe(2);
      expect(await ctx.backend.runs.renewLease(run.id, 'node-a', at(40_000))).toBe(false);
      expect(await ctx.backend.runs.get(run.id)).toMatchObject({
        ownerNode: 'node-b',
        leaseExpiresAt: at(35_000),
      });
    });

    it('lets exactly one of several nodes claiming an expired run at once win', async () => {
      const run = await activeRun();
      await ctx.backend.runs.claim(run.id, 'dead', at(0), at(1000));
      const nodes = ['n1', 'n2', 'n3', 'n4', 'n5'];
      const won = await Promise.all(
        nodes.map((node) => ctx.backend.runs.claim(run.id, node, at(5000), at(20_000))),
      );
      expect(won.filter((claim) => claim !== null)).toEqual([2]);
      expect((await ctx.backend.runs.get(run.id))?.ownerNode).toBe(nodes[won.indexOf(2)]);
    });

    it('records a claim made at creation, which other nodes then respect', async () => {
      const session = await ctx.backend.sessions.create({}, {});
      const { run } = await ctx.backend.runs.create({
        sessionId: session.id,
        ownerNode: 'node-a',
        leaseExpiresAt: at(15_000),
      });
      expect(run).toMatchObject({ ownerNode: 'node-a', leaseExpiresAt: at(15_000) });
      expect(await ctx.backend.runs.claim(run.id, 'node-b', at(1000), at(20_000))).toBeNull();
      expect(await ctx.backend.runs.renewLease(run.id, 'node-a', at(30_000))).toBe(true);
    });

    it('never claims or renews a run that is not active', async () => {
      const run = await activeRun();
      await ctx.backend.runs.claim(run.id, 'node-a', at(0), at(15_000));
      await ctx.backend.runs.update(run.id, { status: 'completed' });
      expect(await ctx.backend.runs.renewLease(run.id, 'node-a', at(20_000))).toBe(false);
      expect(await ctx.backend.runs.claim(run.id, 'node-b', at(30_000), at(40_000))).toBeNull();
      expect(await ctx.backend.runs.claim(uid('missing'), 'node-a', at(0), at(1))).toBeNull();
    });
  });
}
