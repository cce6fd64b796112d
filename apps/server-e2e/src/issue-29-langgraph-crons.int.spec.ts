import { eventually } from './testing/agent-server';
import { langGraphServerForSpec, sdkFailure } from './testing/langgraph-sdk';
import { postgresServerDatabase, sqliteServerDatabase } from './testing/postgres';

/**
 * The LangGraph API's crons (issue 29) driven by the official SDK's `client.crons.*` against the
 * built server, on SQLite and PostgreSQL: create, createForThread, search, count, update,
 * delete on the schedules' store, an every-second cron firing into its thread, tenancy (another
 * tenant's cron is "Cron not found") and bad input (422 naming the field, nothing stored); and
 * an every-second cron of a langgraph.json graph's assistant (`echo`) firing graph runs into
 * its thread.
 */
const ALICE = 'e2e-crons-alice-0123456789';
const BOB = 'e2e-crons-bob-0123456789';
/** UUID v5 of `agent:default` in langgraph dev's namespace (docs/langgraph-api.md). */
const DEFAULT_ASSISTANT = 'c19692bb-ae7d-5525-bc32-cfcd10ad7759';

const human = (content: string) => ({ messages: [{ type: 'human', content }] });

describe.each([
  ['SQLite', () => sqliteServerDatabase('cognition-e2e-crons-')],
  ['PostgreSQL', postgresServerDatabase],
])('LangGraph crons with the official SDK on %s (issue 29)', (_name, createDatabase) => {
  const lg = langGraphServerForSpec(
    { alice: ALICE, bob: BOB },
    createDatabase,
    'cognition-e2e-crons-ws-',
    { echoModel: true, env: { COGNITION_SCHEDULES_POLL_SECONDS: '0.2' } },
  );

  /** GET /runs/crons/{id} (the SDK has no `crons.get`). */
  const getCron = async (key: string, id: string) => {
    const res = await fetch(`${lg.server.url}/runs/crons/${id}`, { headers: { 'x-api-key': key } });
    return { status: res.status, body: (await res.json()) as Record<string, unknown> };
  };
  const post = async (path: string, body: unknown) => {
    const res = await fetch(`${lg.server.url}${path}`, {
      method: 'POST',
      headers: { 'x-api-key': ALICE, 'content-type': 'application/json' },
      body: JSON.stringify(body),
    });
    return { status: res.status, body: (await res.json()) as Record<string, unknown> };
  };

  it('fires an every-second cron into its thread, then stops once it is deleted', async () => {
    const thread = await lg.alice.threads.create();
    const cron = await lg.alice.crons.createForThread(thread.thread_id, 'agent:default', {
      schedule: '* * * * * *',
      input: human('tick'),
    });
    expect(cron).toMatchObject({
      thread_id: thread.thread_id,
      assistant_id: DEFAULT_ASSISTANT,
      schedule: '* * * * * *',
      enabled: true,
    });
    const runs = await eventually(async () => {
      const list = await lg.alice.runs.list(thread.thread_id);
      return list.filter((r) => r.status === 'success').length >= 2 ? list : undefined;
    }, 30_000);
    expect(runs.every((r) => r.thread_id === thread.thread_id)).toBe(true);
    await lg.alice.crons.delete(cron.cron_id);
    expect((await getCron(ALICE, cron.cron_id)).status).toBe(404);
    const state = await lg.alice.threads.getState(thread.thread_id);
    const messages = (state.values as { messages: { type: string; content: unknown }[] }).messages;
    expect(messages.find((m) => m.type === 'ai')?.content).toBe('You said: tick');
  });

  it('creates, searches, counts, updates and deletes crons on the schedules store', async () => {
    const thread = await lg.alice.threads.create();
    // POST /runs/crons with our timezone and an end time (the SDK sends neither).
    const end = new Date(Date.now() + 30 * 24 * 3600 * 1000).toISOString();
    const made = await post('/runs/crons', {
      assistant_id: 'agent:default',
      schedule: '0 9 * * *',
      timezone: 'Europe/Berlin',
      end_time: end,
      input: human('daily report'),
      metadata: { team: 'ops', level: 2 },
    });
    expect(made.status).toBe(200);
    const stateless = made.body;
    expect(stateless).toMatchObject({
      assistant_id: DEFAULT_ASSISTANT,
      thread_id: null,
      on_run_completed: 'delete',
      timezone: 'Europe/Berlin',
      end_time: end,
      metadata: { team: 'ops', level: 2 },
      enabled: true,
      payload: { input: human('daily report') },
    });
    // 09:00 in Berlin is 07:00 or 08:00 UTC.
    expect(String(stateless['next_run_date'])).toMatch(/T0[78]:00:00\.000Z$/);
    const id = String(stateless['cron_id']);
    // The same schedule over REST.
    const rest = await fetch(`${lg.server.url}/schedules/${id}`, {
      headers: { authorization: `Bearer ${ALICE}` },
    });
    expect(await rest.json()).toMatchObject({ schedule: '0 9 * * *', content: 'daily report' });
    const threaded = await lg.alice.crons.createForThread(thread.thread_id, DEFAULT_ASSISTANT, {
      schedule: '30 2 * * *',
      input: human('nightly'),
      enabled: false,
    });
    expect(threaded).toMatchObject({ enabled: false, next_run_date: null });

    const mine = await lg.alice.crons.search({ assistantId: 'agent:default', limit: 100 });
    expect(mine.map((c) => c.cron_id)).toEqual(expect.arrayContaining([id, threaded.cron_id]));
    expect(await lg.alice.crons.search({ threadId: thread.thread_id })).toEqual([
      expect.objectContaining({ cron_id: threaded.cron_id }),
    ]);
    expect(await lg.alice.crons.count({ threadId: thread.thread_id })).toBe(1);
    const disabled = await lg.alice.crons.search({ enabled: false, limit: 100 });
    expect(disabled.map((c) => c.cron_id)).toContain(threaded.cron_id);
    expect(disabled.map((c) => c.cron_id)).not.toContain(id);
    const picked = await lg.alice.crons.search({
      threadId: thread.thread_id,
      select: ['cron_id', 'schedule'],
    });
    expect(picked).toEqual([{ cron_id: threaded.cron_id, schedule: '30 2 * * *' }]);

    const updated = await lg.alice.crons.update(threaded.cron_id, {
      schedule: '45 3 * * *',
      enabled: true,
      metadata: { owner: 'ada' },
    });
    expect(updated).toMatchObject({
      schedule: '45 3 * * *',
      enabled: true,
      metadata: { owner: 'ada' },
    });
    expect(String(updated.next_run_date)).toMatch(/T03:45:00\.000Z$/);
    expect((await getCron(ALICE, threaded.cron_id)).body).toEqual(updated);

    // Another tenant sees none of it.
    expect(await getCron(BOB, id)).toEqual({ status: 404, body: { detail: 'Cron not found' } });
    expect(await sdkFailure(lg.bob.crons.update(id, { enabled: false }))).toMatchObject({
      status: 404,
    });
    expect(await sdkFailure(lg.bob.crons.delete(id))).toMatchObject({ status: 404 });
    expect(await lg.bob.crons.search({ limit: 100 })).toEqual([]);
    expect(await lg.bob.crons.count()).toBe(0);
    expect(
      await sdkFailure(
        lg.bob.crons.createForThread(thread.thread_id, 'agent:default', {
          schedule: '* * * * *',
          input: human('x'),
        }),
      ),
    ).toEqual({ status: 404, body: { detail: 'Thread not found' } });

    await lg.alice.crons.delete(id);
    await lg.alice.crons.delete(threaded.cron_id);
    expect(await lg.alice.crons.count({ threadId: thread.thread_id })).toBe(0);
    expect(await sdkFailure(lg.alice.crons.delete(id))).toMatchObject({ status: 404 });
  });

  it('refuses bad input with a 422 naming the field, storing nothing', async () => {
    const before = await lg.alice.crons.count();
    const create = (body: Record<string, unknown>) =>
      post('/runs/crons', { assistant_id: 'agent:default', input: human('x'), ...body });
    const field = async (body: Record<string, unknown>) => {
      const res = await create(body);
      expect(res.status).toBe(422);
      return (res.body['errors'] as { path: string; message: string }[]).map((e) => e.path);
    };
    expect(await field({ schedule: '0 0 32 * *' })).toEqual(['body.schedule']);
    const bad = await create({ schedule: '0 0 32 * *' });
    expect(String(bad.body['detail'])).toContain('day-of-month 32');
    expect(await field({ schedule: '* * * * *', timezone: 'Mars/Olympus' })).toEqual([
      'body.timezone',
    ]);
    expect(await field({ schedule: '* * * * *', end_time: '2001-01-01T00:00:00Z' })).toEqual([
      'body.end_time',
    ]);
    expect(await field({ schedule: '* * * * *', input: { messages: [] } })).toEqual([
      'body.input.messages',
    ]);
    expect(await field({ schedule: '* * * * *', webhook: 'ftp://example.com/x' })).toEqual([
      'body.webhook',
    ]);
    expect(await field({ schedule: '* * * * *', interrupt_before: ['tools'] })).toEqual([
      'body.interrupt_before',
    ]);
    expect(await field({ schedule: '* * * * *', supersteps: [] })).toEqual(['body.supersteps']);
    expect(await field({})).toEqual(['body.schedule']);
    expect(
      await sdkFailure(lg.alice.crons.create('no-such-assistant', { schedule: '* * * * *' })),
    ).toEqual({ status: 404, body: { detail: 'Assistant not found' } });
    expect(await lg.alice.crons.count()).toBe(before);
  });
});

describe('LangGraph crons of a langgraph.json graph on SQLite (issue 29)', () => {
  const lg = langGraphServerForSpec(
    { alice: ALICE, bob: BOB },
    () => sqliteServerDatabase('cognition-e2e-graph-crons-'),
    'cognition-e2e-graph-crons-ws-',
    { env: { COGNITION_SCHEDULES_POLL_SECONDS: '0.2' } },
  );

  it("fires an every-second cron of the echo graph into its thread: graph runs with the cron's input", async () => {
    const thread = await lg.alice.threads.create();
    const cron = await lg.alice.crons.createForThread(thread.thread_id, 'echo', {
      schedule: '* * * * * *',
      input: { text: 'tick' },
    });
    expect(cron).toMatchObject({
      thread_id: thread.thread_id,
      schedule: '* * * * * *',
      enabled: true,
      payload: { input: { text: 'tick' } },
    });
    const runs = await eventually(async () => {
      const list = await lg.alice.runs.list(thread.thread_id);
      return list.filter((r) => r.status === 'success').length >= 2 ? list : undefined;
    }, 30_000);
    await lg.alice.crons.delete(cron.cron_id);
    const done = runs.filter((r) => r.status === 'success');
    expect(done.every((r) => r.thread_id === thread.thread_id)).toBe(true);
    expect(done[0]).toMatchObject({ kwargs: { graph_id: 'echo', input: { text: 'tick' } } });
    const [first] = done;
    if (!first) throw new Error('no run');
    expect(await lg.alice.runs.join(thread.thread_id, first.run_id)).toEqual({
      text: 'echo: tick',
    });
    expect((await lg.alice.threads.getState(thread.thread_id)).values).toEqual({
      text: 'echo: tick',
    });
  });

  it('fires a stateless cron of the echo graph on a new thread per firing (kept)', async () => {
    const cron = await lg.alice.crons.create('echo', {
      schedule: '* * * * * *',
      input: { text: 'tock' },
      onRunCompleted: 'keep',
    });
    expect(cron).toMatchObject({ thread_id: null, on_run_completed: 'keep' });
    const threads = await eventually(async () => {
      const found = await lg.alice.threads.search({ metadata: { schedule_id: cron.cron_id } });
      return found.length >= 2 ? found : undefined;
    }, 30_000);
    await lg.alice.crons.delete(cron.cron_id);
    const [thread] = threads;
    if (!thread) throw new Error('no thread');
    const [run] = await eventually(async () => {
      const list = await lg.alice.runs.list(thread.thread_id);
      return list.some((r) => r.status === 'success') ? list : undefined;
    }, 30_000);
    expect(run).toMatchObject({ status: 'success', kwargs: { graph_id: 'echo' } });
    expect((await lg.alice.threads.getState(thread.thread_id)).values).toEqual({
      text: 'echo: tock',
    });
  });

  it('refuses bad input of a graph cron with a 422 naming the field, storing nothing', async () => {
    const before = await lg.alice.crons.count();
    const post = async (path: string, body: unknown) => {
      const res = await fetch(`${lg.server.url}${path}`, {
        method: 'POST',
        headers: { 'x-api-key': ALICE, 'content-type': 'application/json' },
        body: JSON.stringify(body),
      });
      const json = (await res.json()) as { errors?: { path: string }[] };
      return { status: res.status, fields: (json.errors ?? []).map((e) => e.path) };
    };
    expect(
      await post('/runs/crons', { assistant_id: 'echo', schedule: '* * * * *', input: 'hi' }),
    ).toEqual({ status: 422, fields: ['body.input'] });
    expect(
      await post('/runs/crons', {
        assistant_id: 'echo',
        schedule: '0 0 32 * *',
        input: { text: 'x' },
      }),
    ).toEqual({ status: 422, fields: ['body.schedule'] });
    // A thread that ran another graph holds that graph's state.
    const thread = await lg.alice.threads.create();
    await lg.alice.runs.wait(thread.thread_id, 'echo', { input: { text: 'x' } });
    expect(
      await post(`/threads/${thread.thread_id}/runs/crons`, {
        assistant_id: 'agent',
        schedule: '* * * * *',
        input: { messages: [] },
      }),
    ).toEqual({ status: 422, fields: ['body.assistant_id'] });
    expect(await lg.alice.crons.count()).toBe(before);
  });
});
