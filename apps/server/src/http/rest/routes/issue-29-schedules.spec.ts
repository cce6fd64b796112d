import request from 'supertest';
import type { TestApp } from '../../../testing/test-app';
import { createTestApp } from '../../../testing/test-app';

const ALICE = { 'X-Cognition-Scope-User': 'alice' };
const BOB = { 'X-Cognition-Scope-User': 'bob' };
const DAILY = {
  schedule: '30 2 * * *',
  timezone: 'Europe/Berlin',
  target: { kind: 'new_session', agent_name: 'default' },
  content: 'the daily report',
};

interface Json {
  id: string;
  total: number;
  errors: { path: string; message: string }[];
  run: { session_id: string };
  run_id: string;
  runs: { run_id: string }[];
}
/** A response body, typed for the fields these checks read. */
const json = (res: { body: unknown }) => res.body as Json;

/** The REST schedules routes (issue 29): snake_case wire, 422 naming the field, tenants apart. */
describe('REST /schedules', () => {
  let t: TestApp;
  beforeEach(async () => {
    t = await createTestApp({ scoping: { enabled: true, keys: ['user'] } });
  });
  afterEach(() => t.close());

  it('refuses bad input with a 422 naming the field, storing nothing', async () => {
    const session = await request(t.app).post('/sessions').set(ALICE).send({});
    const cases: [Record<string, unknown>, number, string | null, string | null][] = [
      [
        { ...DAILY, schedule: '0 0 32 * *' },
        422,
        'body.schedule',
        'day-of-month 32 is out of range 1-31',
      ],
      [{ ...DAILY, timezone: 'Mars/Olympus' }, 422, 'body.timezone', null],
      [{ ...DAILY, end_time: '2020-01-01T00:00:00Z' }, 422, 'body.end_time', null],
      [{ ...DAILY, end_time: 'tomorrow' }, 422, 'body.end_time', null],
      [{ ...DAILY, run_at: '2099-01-01T00:00:00Z' }, 422, 'body.schedule', null],
      [
        { ...DAILY, target: { kind: 'new_session', agent_name: 'ghost' } },
        422,
        'body.target.agent_name',
        null,
      ],
      [{ ...DAILY, target: { kind: 'session' } }, 422, 'body.target.session_id', null],
      [{ ...DAILY, misfire: 'later' }, 422, 'body.misfire', null],
      [{ ...DAILY, target: { kind: 'session', session_id: json(session).id } }, 404, null, null],
    ];
    for (const [body, status, path, message] of cases) {
      const res = await request(t.app).post('/schedules').set(BOB).send(body);
      expect({ body, status: res.status }).toEqual({ body, status });
      const errors = (res.body as { errors?: { path: string; message: string }[] }).errors ?? [];
      if (path) expect(errors.map((e) => e.path)).toContain(path);
      if (message) expect(errors.map((e) => e.message)).toContain(message);
    }
    const list = await request(t.app).get('/schedules').set(BOB);
    expect(list.body).toEqual({ schedules: [], total: 0 });
  });

  it('creates, lists, patches, triggers, lists runs and deletes', async () => {
    const session = await request(t.app).post('/sessions').set(ALICE).send({});
    const created = await request(t.app)
      .post('/schedules')
      .set(ALICE)
      .send({
        ...DAILY,
        target: { kind: 'session', session_id: json(session).id },
        metadata: { team: 'ops' },
      });
    expect(created.status).toBe(201);
    expect(created.body).toMatchObject({
      kind: 'cron',
      schedule: '30 2 * * *',
      timezone: 'Europe/Berlin',
      enabled: true,
      misfire: 'run_once',
      multitask_strategy: 'enqueue',
      target: { kind: 'session', session_id: json(session).id },
      last_fired_at: null,
    });
    const id = json(created).id;
    expect((await request(t.app).get(`/schedules/${id}`).set(BOB)).status).toBe(404);
    const filtered = await request(t.app)
      .get('/schedules?metadata.team=ops&enabled=true')
      .set(ALICE);
    expect(json(filtered).total).toBe(1);
    const patched = await request(t.app)
      .patch(`/schedules/${id}`)
      .set(ALICE)
      .send({ enabled: false, schedule: '0 9 * * 1-5' });
    expect(patched.status).toBe(200);
    expect(patched.body).toMatchObject({ enabled: false, schedule: '0 9 * * 1-5' });
    const badPatch = await request(t.app)
      .patch(`/schedules/${id}`)
      .set(ALICE)
      .send({ schedule: '* *' });
    expect(badPatch.status).toBe(422);
    expect(json(badPatch).errors[0]?.path).toBe('body.schedule');

    t.model.push({ text: 'report' });
    const fired = await request(t.app).post(`/schedules/${id}/trigger`).set(ALICE);
    expect(fired.status).toBe(201);
    expect(fired.body).toMatchObject({ reason: 'manual', session_id: json(session).id });
    expect(json(fired).run.session_id).toBe(json(session).id);
    const runs = await request(t.app).get(`/schedules/${id}/runs`).set(ALICE);
    expect(json(runs).runs.map((r) => r.run_id)).toEqual([json(fired).run_id]);
    expect((await request(t.app).delete(`/schedules/${id}`).set(BOB)).status).toBe(404);
    expect((await request(t.app).delete(`/schedules/${id}`).set(ALICE)).status).toBe(204);
    expect((await request(t.app).get(`/schedules/${id}/runs`).set(ALICE)).status).toBe(404);
  });
});
