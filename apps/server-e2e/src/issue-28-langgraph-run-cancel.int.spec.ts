import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { sdkFailure, langGraphServerForSpec } from './testing/langgraph-sdk';
import { postgresServerDatabase, sqliteServerDatabase } from './testing/postgres';

/**
 * Cancelling runs over the LangGraph API (issue 28), with the official SDK against the built
 * server on SQLite and PostgreSQL: a run enqueued behind another never starts once cancelled
 * (`interrupted`, the queue moves on); `action=rollback` cancels the running run and removes it
 * with the state it wrote, and removes a waiting one; another tenant's run is not found.
 */
const ALICE = 'e2e-lg-run-cancel-alice-0123456789';
const BOB = 'e2e-lg-run-cancel-bob-0123456789';

async function until(check: () => boolean | Promise<boolean>, what: string): Promise<void> {
  for (let i = 0; i < 600; i += 1) {
    if (await check()) return;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  throw new Error(`timed out waiting for ${what}`);
}

/** The steps graph's log of `dir`: the steps it ran, in order. */
function stepsRun(dir: string): string[] {
  const log = path.join(dir, 'log');
  return existsSync(log) ? readFileSync(log, 'utf8').trim().split('\n') : [];
}

describe.each([
  ['SQLite', () => sqliteServerDatabase('cognition-e2e-lg-run-cancel-')],
  ['PostgreSQL', postgresServerDatabase],
])('LangGraph API: cancelling runs on %s (issue 28)', (_name, createDatabase) => {
  const lg = langGraphServerForSpec(
    { alice: ALICE, bob: BOB },
    createDatabase,
    'cognition-e2e-lg-run-cancel-ws-',
  );
  let root: string;
  /** A fresh folder for one run of the steps graph; `release` lets its second step end. */
  const folder = (name: string, release = false): string => {
    const dir = path.join(root, name);
    mkdirSync(dir);
    if (release) writeFileSync(path.join(dir, 'release'), '');
    return dir;
  };
  beforeEach(() => {
    root = mkdtempSync(path.join(tmpdir(), 'cognition-e2e-lg-run-cancel-'));
  });
  afterEach(() => {
    rmSync(root, { recursive: true, force: true });
  });

  it('cancels a run enqueued behind another: it never starts, and the queue moves on', async () => {
    const thread = await lg.alice.threads.create();
    const first = folder('first');
    const running = await lg.alice.runs.create(thread.thread_id, 'steps', {
      input: { dir: first },
    });
    await until(() => stepsRun(first).includes('second'), 'the second step');
    const skipped = folder('skipped', true);
    const waiting = await lg.alice.runs.create(thread.thread_id, 'steps', {
      input: { dir: skipped },
      multitaskStrategy: 'enqueue',
    });
    const last = folder('last', true);
    const after = await lg.alice.runs.create(thread.thread_id, 'steps', {
      input: { dir: last },
      multitaskStrategy: 'enqueue',
    });
    expect([waiting.status, after.status]).toEqual(['pending', 'pending']);
    // Its stream, joined while it waits, ends when it is cancelled.
    const joined = (async () => {
      const parts: string[] = [];
      for await (const part of lg.alice.runs.joinStream(thread.thread_id, waiting.run_id)) {
        parts.push(part.event);
      }
      return parts;
    })();

    expect(await sdkFailure(lg.bob.runs.cancel(thread.thread_id, waiting.run_id))).toEqual({
      status: 404,
      body: { detail: 'Thread not found' },
    });
    await lg.alice.runs.cancel(thread.thread_id, waiting.run_id);
    expect((await lg.alice.runs.get(thread.thread_id, waiting.run_id)).status).toBe('interrupted');
    expect(await joined).toContain('error');
    const pending = await lg.alice.runs.list(thread.thread_id, { status: 'pending' });
    expect(pending.map((run) => run.run_id)).toEqual([after.run_id]);
    // Cancelling it again changes nothing.
    await lg.alice.runs.cancel(thread.thread_id, waiting.run_id);

    writeFileSync(path.join(first, 'release'), '');
    await lg.alice.runs.join(thread.thread_id, running.run_id);
    await lg.alice.runs.join(thread.thread_id, after.run_id);
    expect((await lg.alice.runs.get(thread.thread_id, after.run_id)).status).toBe('success');
    expect(stepsRun(skipped)).toEqual([]);
    expect(stepsRun(last)).toEqual(['first', 'second']);
    expect((await lg.alice.runs.get(thread.thread_id, waiting.run_id)).status).toBe('interrupted');
    expect((await lg.alice.threads.get(thread.thread_id)).status).toBe('idle');
  });

  it('rolls a running run back: cancelled and removed with the state it wrote', async () => {
    const thread = await lg.alice.threads.create();
    const kept = folder('kept', true);
    const done = await lg.alice.runs.wait(thread.thread_id, 'steps', { input: { dir: kept } });
    expect(done).toEqual({ dir: kept, done: ['first', 'second'] });
    const before = await lg.alice.threads.getHistory(thread.thread_id, { limit: 100 });

    const dropped = folder('dropped');
    const run = await lg.alice.runs.create(thread.thread_id, 'steps', { input: { dir: dropped } });
    await until(() => stepsRun(dropped).includes('second'), 'the second step');
    // Its first step reaches the thread's state: LangGraph stores a step's checkpoint while the
    // next step already runs, so the second step having started does not mean it is stored yet.
    const state = async () =>
      (await lg.alice.threads.getState<{ done?: string[] }>(thread.thread_id)).values;
    await until(async () => (await state()).done?.length === 3, "the first step's checkpoint");
    expect(await state()).toEqual({ dir: dropped, done: ['first', 'second', 'first'] });
    expect(
      await sdkFailure(lg.bob.runs.cancel(thread.thread_id, run.run_id, true, 'rollback')),
    ).toEqual({ status: 404, body: { detail: 'Thread not found' } });
    await lg.alice.runs.cancel(thread.thread_id, run.run_id, true, 'rollback');
    expect(await sdkFailure(lg.alice.runs.get(thread.thread_id, run.run_id))).toEqual({
      status: 404,
      body: { detail: 'Run not found' },
    });
    expect((await lg.alice.runs.list(thread.thread_id)).map((r) => r.run_id)).toHaveLength(1);
    expect((await lg.alice.threads.getState(thread.thread_id)).values).toEqual(done);
    const history = await lg.alice.threads.getHistory(thread.thread_id, { limit: 100 });
    expect(history.map((state) => state.checkpoint.checkpoint_id)).toEqual(
      before.map((state) => state.checkpoint.checkpoint_id),
    );
    expect((await lg.alice.threads.get(thread.thread_id)).status).toBe('idle');
    // The thread goes on from there.
    writeFileSync(path.join(dropped, 'release'), '');
    const again = folder('again', true);
    expect(await lg.alice.runs.wait(thread.thread_id, 'steps', { input: { dir: again } })).toEqual({
      dir: again,
      done: ['first', 'second', 'first', 'second'],
    });
  });

  it('rolls a waiting run back: removed before it ever starts', async () => {
    const thread = await lg.alice.threads.create();
    const first = folder('first');
    const running = await lg.alice.runs.create(thread.thread_id, 'steps', {
      input: { dir: first },
    });
    await until(() => stepsRun(first).includes('second'), 'the second step');
    const never = folder('never', true);
    const waiting = await lg.alice.runs.create(thread.thread_id, 'steps', {
      input: { dir: never },
      multitaskStrategy: 'enqueue',
    });
    await lg.alice.runs.cancel(thread.thread_id, waiting.run_id, false, 'rollback');
    expect(await sdkFailure(lg.alice.runs.get(thread.thread_id, waiting.run_id))).toEqual({
      status: 404,
      body: { detail: 'Run not found' },
    });
    writeFileSync(path.join(first, 'release'), '');
    await lg.alice.runs.join(thread.thread_id, running.run_id);
    expect((await lg.alice.runs.list(thread.thread_id)).map((r) => r.run_id)).toEqual([
      running.run_id,
    ]);
    expect(stepsRun(never)).toEqual([]);
  });

  it('names a bad action (422)', async () => {
    const thread = await lg.alice.threads.create();
    const run = await lg.alice.runs.create(thread.thread_id, 'echo', { input: { text: 'x' } });
    const response = await fetch(
      `${lg.server.url}/threads/${thread.thread_id}/runs/${run.run_id}/cancel?action=undo`,
      { method: 'POST', headers: { 'x-api-key': ALICE } },
    );
    expect(response.status).toBe(422);
    expect(JSON.stringify(await response.json())).toContain('query.action');
  });
});
