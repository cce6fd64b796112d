import { toHttpError } from '../../errors';
import type { ApiTestBed } from '../../testing/test-bed';
import { createApiTestBed, trpcErrorOf } from '../../testing/test-bed';

const ALICE = { user: 'alice' };
const BOB = { user: 'bob' };
const DAILY = {
  expression: '30 2 * * *',
  timezone: 'Europe/Berlin',
  target: { kind: 'new_session' as const },
  content: 'the nightly triage',
};

/** The schedules procedures (issue 29): CRUD per tenant, bad input, trigger now. */
describe('schedules procedures', () => {
  let bed: ApiTestBed;
  beforeEach(async () => {
    bed = await createApiTestBed();
  });
  afterEach(async () => {
    await bed.cleanup();
  });

  it('refuses bad input with a 422 naming the field, storing nothing', async () => {
    const session = await bed.as(ALICE).sessions.create({});
    const cases: [Record<string, unknown>, number, string | null][] = [
      [{ ...DAILY, expression: '0 0 32 * *' }, 422, 'expression'],
      [{ ...DAILY, timezone: 'Europe/Atlantis' }, 422, 'timezone'],
      [{ ...DAILY, endTime: new Date(Date.now() - 60_000) }, 422, 'endTime'],
      [{ ...DAILY, target: { kind: 'new_session', agentName: 'nobody' } }, 422, 'target.agentName'],
      [{ ...DAILY, target: { kind: 'new_session', agentName: 'helper' } }, 422, 'target.agentName'],
      [{ ...DAILY, misfire: 'sometimes' }, 422, 'misfire'],
      [{ ...DAILY, surprise: true }, 422, '(root)'],
      [{ ...DAILY, target: { kind: 'session', sessionId: session.id } }, 404, null],
    ];
    for (const [input, status, path] of cases) {
      const error = await trpcErrorOf(bed.as(BOB).schedules.create(input as never));
      const { status: got, body } = toHttpError(error);
      expect({ input, got }).toEqual({ input, got: status });
      if (path) expect(body.errors?.map((issue) => issue.path)).toContain(path);
    }
    expect((await bed.as().schedules.list()).total).toBe(0);
  });

  it('creates, lists with filters, patches and deletes within the tenant', async () => {
    const created = await bed.as(ALICE).schedules.create({ ...DAILY, metadata: { team: 'ops' } });
    expect(created).toMatchObject({ kind: 'cron', enabled: true, misfire: 'run_once' });
    expect(created.nextFireAt).toBeInstanceOf(Date);
    await bed.as(ALICE).schedules.create({ ...DAILY, enabled: false });
    expect((await bed.as(ALICE).schedules.list({ enabled: true })).items.map((s) => s.id)).toEqual([
      created.id,
    ]);
    expect((await bed.as(ALICE).schedules.list({ metadata: { team: 'ops' } })).total).toBe(1);
    expect((await bed.as(BOB).schedules.list()).total).toBe(0);
    expect(
      toHttpError(await trpcErrorOf(bed.as(BOB).schedules.get({ id: created.id }))).status,
    ).toBe(404);
    const patched = await bed
      .as(ALICE)
      .schedules.update({ id: created.id, enabled: false, expression: '0 9 * * 1-5' });
    expect(patched).toMatchObject({ enabled: false, expression: '0 9 * * 1-5' });
    const bad = await trpcErrorOf(
      bed.as(ALICE).schedules.update({ id: created.id, expression: '0 25 * * *' }),
    );
    expect(toHttpError(bad).body.errors?.[0]?.message).toBe('hour 25 is out of range 0-23');
    await expect(bed.as(BOB).schedules.delete({ id: created.id })).rejects.toMatchObject({
      code: 'NOT_FOUND',
    });
    expect(await bed.as(ALICE).schedules.delete({ id: created.id })).toEqual({ deleted: true });
    expect((await bed.as(ALICE).schedules.list()).total).toBe(1);
  });

  it('triggers a schedule now and lists its runs', async () => {
    const session = await bed.as(ALICE).sessions.create({});
    const schedule = await bed
      .as(ALICE)
      .schedules.create({ ...DAILY, target: { kind: 'session', sessionId: session.id } });
    bed.model.push({ text: 'triaged' });
    const fire = await bed.as(ALICE).schedules.trigger({ id: schedule.id });
    expect(fire).toMatchObject({ reason: 'manual', sessionId: session.id });
    expect(fire.run?.sessionId).toBe(session.id);
    const runs = await bed.as(ALICE).schedules.runs({ id: schedule.id });
    expect(runs.map((r) => r.runId)).toEqual([fire.runId]);
    expect(
      toHttpError(await trpcErrorOf(bed.as(BOB).schedules.runs({ id: schedule.id }))).status,
    ).toBe(404);
  });
});
