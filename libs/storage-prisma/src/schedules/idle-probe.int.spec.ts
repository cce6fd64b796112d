import type { DatabaseProvider, OpenedDatabase } from '../db/db';
import { openPostgres, openSqlite } from '../db/db';
import type { RawConnection } from '../db/raw-connections';
import { requireRawConnection } from '../db/raw-connections';
import type { TestDatabase } from '../testing/test-db';
import { createTestDatabase } from '../testing/test-db';
import { anyDue, anyUnsettled } from './idle-probe';

const T0 = new Date('2026-03-01T10:00:00.000Z');
const plus = (ms: number) => new Date(T0.getTime() + ms);

/**
 * The idle probes answer "nothing to do" only when the full path would find nothing: the
 * boundaries of `claimDue`'s `next_fire_at <= dueBy` and `listUnsettledFires`'s
 * `claimed_at < claimedBefore`, disabled schedules, settled fires and pending cleanups.
 */
describe.each<DatabaseProvider>(['sqlite', 'postgresql'])('idle probes (%s)', (provider) => {
  let database: TestDatabase;
  let opened: OpenedDatabase;
  let raw: RawConnection;

  beforeAll(async () => {
    database = await createTestDatabase(provider);
    opened =
      database.provider === 'sqlite'
        ? await openSqlite(database.path)
        : await openPostgres(database.url);
    raw = requireRawConnection(opened.db, 'the probe spec');
  });

  afterAll(async () => {
    await opened.close();
    await database.cleanup();
  });

  const schedule = (id: string, nextFireAt: Date | null, enabled = true) =>
    opened.db.schedule.create({
      data: {
        id,
        scope: '{}',
        kind: 'cron',
        expression: '* * * * * *',
        timezone: 'UTC',
        enabled,
        misfire: 'run_once',
        target: '{}',
        content: '',
        metadata: '{}',
        multitaskStrategy: 'enqueue',
        nextFireAt,
        createdAt: T0,
        updatedAt: T0,
      },
    });

  it('sees a due enabled schedule from its due time on, never a disabled one', async () => {
    expect(await anyDue(raw, plus(0))).toBe(false);
    await schedule('off', plus(-5000), false);
    await schedule('never', null);
    expect(await anyDue(raw, plus(0))).toBe(false);
    await schedule('on', plus(1000));
    expect(await anyDue(raw, plus(999))).toBe(false);
    expect(await anyDue(raw, plus(1000))).toBe(true);
    expect(await anyDue(raw, plus(60_000))).toBe(true);
  });

  it('sees a run-less fire claimed before the cut-off, or any pending cleanup', async () => {
    await schedule('fired', plus(0));
    const fire = (dueAt: Date, claimedAt: Date, runId: string | null, cleanup: string) =>
      opened.db.scheduleFire.create({
        data: {
          scheduleId: 'fired',
          dueAt,
          claimedAt,
          nodeId: 'n',
          reason: 'scheduled',
          runId,
          cleanup,
        },
      });
    expect(await anyUnsettled(raw, plus(100))).toBe(false);
    await fire(plus(0), plus(0), 'run-1', 'none');
    await fire(plus(1), plus(1), null, 'done');
    expect(await anyUnsettled(raw, plus(100))).toBe(false);
    await fire(plus(2), plus(100), null, 'none');
    expect(await anyUnsettled(raw, plus(100))).toBe(false);
    expect(await anyUnsettled(raw, plus(101))).toBe(true);
    await fire(plus(3), plus(500), 'run-2', 'pending');
    expect(await anyUnsettled(raw, plus(0))).toBe(true);
  });
});
