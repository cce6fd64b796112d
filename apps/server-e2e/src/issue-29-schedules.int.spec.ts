import { FakeOpenAIServer, eventually, startAgentServer } from './testing/agent-server';
import type { TestCluster } from './testing/cluster';
import { startCluster } from './testing/cluster';
import { http } from './testing/http';
import { sqliteServerDatabase } from './testing/postgres';
import type { ServerDatabase } from './testing/postgres';
import type { ServerProcess } from './testing/server-process';
import { tempWorkspace } from './testing/server-process';

/**
 * Scheduled runs on the built server (issue 29), with real time: every-second schedules.
 * - SQLite, one node: every due second fires once; the server stopped across several due
 *   times and started again fires one coalesced run (`run_once`) or none (`skip`).
 * - PostgreSQL, three nodes: one node killed (kill -9) and restarted while the schedule runs:
 *   exactly one run per due second, none twice, none lost; then every node stopped across
 *   several due times and one started: one coalesced run, none for `skip`.
 */

interface Fire {
  due_at: string;
  reason: 'scheduled' | 'misfire' | 'manual';
  run_id: string | null;
  session_id: string | null;
  node_id: string;
  run: { status: string; session_id: string } | null;
}

const SECOND = 1000;
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/**
 * Settings of every server here: short grace and takeover so the spec stays short. The grace is
 * how late a claim may come before its occurrence counts as missed: 4 s was exceeded once on a
 * starved machine (a scheduled second fired as `misfire` in the kill test), so it is 8 s, and an
 * outage lasts longer than it.
 */
const MISFIRE_GRACE_SECONDS = 8;
/** All nodes down this long: the first missed second is older than the grace at the restart. */
const OUTAGE_MS = (MISFIRE_GRACE_SECONDS + 2) * 1000;
const SCHEDULER_ENV = {
  COGNITION_SCHEDULES_POLL_SECONDS: '0.2',
  COGNITION_SCHEDULES_MISFIRE_GRACE_SECONDS: String(MISFIRE_GRACE_SECONDS),
  COGNITION_SCHEDULES_CLAIM_TIMEOUT_SECONDS: '3',
};

async function createEverySecond(url: string, misfire: 'run_once' | 'skip'): Promise<string> {
  const res = await http(url, 'POST', '/schedules', {
    body: {
      schedule: '* * * * * *',
      target: { kind: 'new_session', on_run_completed: 'keep' },
      content: `tick (${misfire})`,
      misfire,
    },
  });
  if (res.status !== 201) throw new Error(`schedule create failed: ${res.status} ${res.text}`);
  return String(res.json?.['id']);
}

async function disable(url: string, id: string): Promise<void> {
  const res = await http(url, 'PATCH', `/schedules/${id}`, { body: { enabled: false } });
  expect(res.status).toBe(200);
}

/** Every fire of the schedule, oldest due time first, once each has its run completed. */
async function settledFires(url: string, id: string): Promise<Fire[]> {
  return eventually(async () => {
    const res = await http(url, 'GET', `/schedules/${id}/runs?limit=500`);
    const fires = (res.json?.['runs'] as Fire[] | undefined) ?? [];
    const done = fires.every((f) => f.run?.status === 'completed');
    return done ? [...fires].reverse() : undefined;
  }, 30 * SECOND);
}

/**
 * Waits until every schedule of `ids` has `count` scheduled fires due after `after` (ms since the
 * epoch): the steps of an outage scenario are what the schedules did, not a time a loaded machine
 * may not keep (a restarted node that has not fired yet left the outage without its end).
 */
async function untilScheduledFires(
  url: string,
  ids: readonly string[],
  after: number,
  count: number,
): Promise<void> {
  for (const id of ids) {
    await eventually(async () => {
      const res = await http(url, 'GET', `/schedules/${id}/runs?limit=500`);
      const fires = (res.json?.['runs'] as Fire[] | undefined) ?? [];
      const since = fires.filter((f) => f.reason === 'scheduled' && Date.parse(f.due_at) > after);
      return since.length >= count;
    }, 30 * SECOND);
  }
}

/** One run per fire, in the fire's own session: counted from the sessions, not the fires. */
async function expectOneRunPerFire(url: string, id: string, fires: Fire[]): Promise<void> {
  const sessions = await http(url, 'GET', `/sessions?metadata.schedule_id=${id}&limit=500`);
  expect(sessions.json?.['total']).toBe(fires.length);
  for (const fire of fires) {
    const runs = await http(url, 'GET', `/sessions/${fire.session_id ?? ''}/runs`);
    const list = runs.json?.['runs'] as { id: string }[];
    expect(list.map((r) => r.id)).toEqual([fire.run_id]);
  }
}

/** Due times as whole seconds since the epoch. */
const seconds = (fires: Fire[]) => fires.map((f) => Date.parse(f.due_at) / SECOND);

/** True when the seconds are consecutive: no second twice, none missing. */
function consecutive(list: number[]): boolean {
  return list.every((s, i) => i === 0 || s === (list[i - 1] ?? 0) + 1);
}

/**
 * The fires of a schedule across one outage: before it, every second; then the one coalesced
 * run (`run_once`, due at the first missed second) or none (`skip`); then every second again.
 * The outage is where the scheduled fires have their one gap.
 */
function expectOutage(fires: Fire[], misfire: 'run_once' | 'skip'): void {
  const coalesced = fires.filter((f) => f.reason === 'misfire');
  const scheduled = seconds(fires.filter((f) => f.reason === 'scheduled'));
  const gaps = scheduled.flatMap((s, i) => (i > 0 && s !== (scheduled[i - 1] ?? 0) + 1 ? [i] : []));
  expect(gaps).toHaveLength(1);
  const split = gaps[0] ?? 0;
  const lastBefore = scheduled[split - 1] ?? 0;
  // The outage lasted several due seconds; none of them fired on its own.
  expect((scheduled[split] ?? 0) - lastBefore - 1).toBeGreaterThanOrEqual(4);
  if (misfire === 'skip') {
    expect(coalesced).toHaveLength(0);
  } else {
    expect(seconds(coalesced)).toEqual([lastBefore + 1]);
  }
}

describe('scheduled runs on the built server (issue 29)', () => {
  let fake: FakeOpenAIServer;
  beforeAll(async () => {
    fake = await FakeOpenAIServer.start({ fallback: () => ({ text: 'tock' }) });
  });
  afterAll(async () => {
    await fake.close();
  });

  describe('SQLite, one node', () => {
    const workspace = tempWorkspace();
    let db: ServerDatabase;
    let server: ServerProcess | undefined;
    const start = async () => {
      server = await startAgentServer(fake, workspace.dir, { ...db.env, ...SCHEDULER_ENV });
      return server.url;
    };
    beforeAll(async () => {
      db = await sqliteServerDatabase('cognition-e2e-schedules-');
    });
    afterAll(async () => {
      await server?.stop('SIGKILL');
      await db.drop();
      workspace.remove();
    });

    it('fires every due second once, and once (or never) for an outage', async () => {
      let url = await start();
      const once = await createEverySecond(url, 'run_once');
      const skip = await createEverySecond(url, 'skip');
      await untilScheduledFires(url, [once, skip], 0, 2);
      await server?.stop('SIGTERM');
      await sleep(OUTAGE_MS);
      const restarted = Date.now();
      url = await start();
      await untilScheduledFires(url, [once, skip], restarted, 1);
      await disable(url, once);
      await disable(url, skip);
      for (const [id, misfire] of [
        [once, 'run_once'],
        [skip, 'skip'],
      ] as const) {
        const fires = await settledFires(url, id);
        expectOutage(fires, misfire);
        await expectOneRunPerFire(url, id, fires);
      }
    });
  });

  describe('PostgreSQL, three nodes', () => {
    let cluster: TestCluster | undefined;
    beforeAll(async () => {
      cluster = await startCluster({ size: 3, fake, leaseSeconds: 10, env: SCHEDULER_ENV });
    });
    afterAll(async () => {
      await cluster?.close();
    });
    const nodes = (): TestCluster => {
      if (!cluster) throw new Error('the cluster did not start');
      return cluster;
    };

    it('fires each due second exactly once while a node is killed and restarted', async () => {
      const id = await createEverySecond(nodes().nodeUrl(0), 'run_once');
      const from = Date.now();
      await sleep(4 * SECOND);
      await nodes().stop(1, 'SIGKILL');
      await sleep(4 * SECOND);
      await nodes().start(1);
      await sleep(5 * SECOND);
      await disable(nodes().nodeUrl(0), id);
      const to = Date.now();
      const fires = await settledFires(nodes().nodeUrl(2), id);
      expect(fires.every((f) => f.reason === 'scheduled')).toBe(true);
      expect(consecutive(seconds(fires))).toBe(true);
      // Every second from the first due time to the disable came due and fired.
      const span = seconds(fires);
      expect(span[0]).toBeLessThanOrEqual(Math.ceil(from / SECOND) + 1);
      expect(span.at(-1)).toBeGreaterThanOrEqual(Math.floor(to / SECOND) - 2);
      expect(new Set(fires.map((f) => f.node_id)).size).toBeGreaterThan(1);
      await expectOneRunPerFire(nodes().nodeUrl(2), id, fires);
    });

    it('fires one coalesced run (none with skip) after every node was down', async () => {
      const url = nodes().nodeUrl(0);
      const once = await createEverySecond(url, 'run_once');
      const skip = await createEverySecond(url, 'skip');
      await untilScheduledFires(url, [once, skip], 0, 2);
      await Promise.all([0, 1, 2].map((i) => nodes().stop(i, 'SIGTERM')));
      await sleep(OUTAGE_MS);
      const restarted = Date.now();
      await nodes().start(2);
      const up = nodes().nodeUrl(2);
      await untilScheduledFires(up, [once, skip], restarted, 1);
      await disable(up, once);
      await disable(up, skip);
      for (const [id, misfire] of [
        [once, 'run_once'],
        [skip, 'skip'],
      ] as const) {
        const fires = await settledFires(up, id);
        expectOutage(fires, misfire);
        await expectOneRunPerFire(up, id, fires);
      }
    });
  });
});
