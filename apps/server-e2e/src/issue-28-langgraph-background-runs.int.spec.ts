import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { eventually } from './testing/agent-server';
import { langGraphServerForSpec, sdkFailure } from './testing/langgraph-sdk';
import { postgresServerDatabase, sqliteServerDatabase } from './testing/postgres';

/**
 * Background stateless runs of the LangGraph API (issue 28), driven by the official SDK against
 * the built server on SQLite and PostgreSQL: `runs.create(null, …)` and `runs.createBatch`,
 * each on a thread of its own that is deleted once its run ended (kept with
 * `on_completion: keep`), also when the node that started the run was killed with SIGKILL
 * mid-run and the run ended on the restarted one.
 */
const ALICE = 'e2e-lg-background-alice-0123456789';
const BOB = 'e2e-lg-background-bob-0123456789';

describe.each([
  ['SQLite', () => sqliteServerDatabase('cognition-e2e-lg-background-')],
  ['PostgreSQL', postgresServerDatabase],
])('LangGraph API: background stateless runs on %s (issue 28)', (_name, createDatabase) => {
  const lg = langGraphServerForSpec(
    { alice: ALICE, bob: BOB },
    createDatabase,
    'cognition-e2e-lg-background-ws-',
  );

  /** Waits until the thread is not found (404); any other failure fails the test. */
  const gone = (threadId: string) =>
    eventually(async () => {
      try {
        await lg.alice.threads.get(threadId);
        return false;
      } catch (error) {
        if ((error as { status?: number }).status === 404) return true;
        throw error;
      }
    });

  it('runs.create(null, …): the run on a thread of its own, deleted once it ended; kept with on_completion keep', async () => {
    const threadsBefore = await lg.alice.threads.count();
    let created: { run_id: string; thread_id?: string } | undefined;
    const run = await lg.alice.runs.create(null, 'echo', {
      input: { text: 'bg' },
      onRunCreated: (meta) => {
        created = meta;
      },
    });
    expect(run).toMatchObject({ assistant_id: expect.any(String) as string, kwargs: {} });
    expect(['pending', 'running', 'success']).toContain(run.status);
    // The SDK reads the run's and its thread's ids from Content-Location.
    expect(created).toEqual({ run_id: run.run_id, thread_id: run.thread_id });
    await gone(run.thread_id);
    expect(await lg.alice.threads.count()).toBe(threadsBefore);

    // SDK 1.15 types `onCompletion` as "complete" | "continue", yet sends it as LangGraph's
    // `on_completion` ("delete" | "keep"), the field of exactly these runs.
    const keep = 'keep' as never;
    const kept = await lg.alice.runs.create(null, 'echo', {
      input: { text: 'keep' },
      onCompletion: keep,
    });
    expect(await lg.alice.runs.join(kept.thread_id, kept.run_id)).toEqual({ text: 'echo: keep' });
    expect(await lg.alice.runs.get(kept.thread_id, kept.run_id)).toMatchObject({
      status: 'success',
    });
    const thread = await lg.alice.threads.get(kept.thread_id);
    expect(thread).toMatchObject({ status: 'idle', values: { text: 'echo: keep' }, metadata: {} });
    // Another tenant never sees it.
    expect((await sdkFailure(lg.bob.threads.get(kept.thread_id))).status).toBe(404);
  });

  it("a background run's thread waits for its run: a thread that is interrupted by interrupt() goes when the run ends", async () => {
    const run = await lg.alice.runs.create(null, 'approval', { input: { request: 'x' } });
    await gone(run.thread_id);
  });

  it('createBatch: one thread per run, each deleted after its run; a bad entry is a 422 naming it and makes none', async () => {
    const threadsBefore = await lg.alice.threads.count();
    const runs = await lg.alice.runs.createBatch([
      { assistantId: 'echo', input: { text: 'one' } },
      { assistantId: 'greeter', input: { text: 'two' }, onCompletion: 'keep' as never },
    ]);
    expect(runs).toHaveLength(2);
    expect(new Set(runs.map((r) => r.thread_id)).size).toBe(2);
    const [first, second] = runs;
    await gone(first?.thread_id ?? '');
    expect(await lg.alice.runs.join(second?.thread_id ?? '', second?.run_id ?? '')).toEqual({
      text: 'hello two',
    });
    expect(await lg.alice.threads.count()).toBe(threadsBefore + 1);

    const bad = await sdkFailure(
      lg.alice.runs.createBatch([
        { assistantId: 'echo', input: { text: 'fine' } },
        { assistantId: 'echo', input: { text: 'x' }, stream_mode: ['nope'] } as never,
      ]),
    );
    expect(bad.status).toBe(422);
    expect(bad.body).toMatchObject({ errors: [{ path: 'body.1.stream_mode.0' }] });
    expect(await lg.alice.threads.count()).toBe(threadsBefore + 1);
    const empty = await sdkFailure(lg.alice.runs.createBatch([]));
    expect(empty.status).toBe(422);
  });

  it("a background run's thread is deleted after its run even when the node that started it was killed mid-run", async () => {
    const dir = path.join(lg.workspace, `steps-${Date.now()}`);
    mkdirSync(dir);
    const log = () => {
      try {
        return readFileSync(path.join(dir, 'log'), 'utf8');
      } catch {
        return '';
      }
    };
    const run = await lg.alice.runs.create(null, 'steps', { input: { dir } });
    // Killed while the second step waits, once the first one is checkpointed.
    await eventually(() => Promise.resolve(log().includes('second')));
    await eventually(async () => {
      const state = await lg.alice.threads.getState<{ done?: string[] }>(run.thread_id);
      return state.values.done?.includes('first');
    });
    await lg.restart({ signal: 'SIGKILL' });
    // The thread is there while its run (taken up again by the restarted node) goes on.
    expect((await lg.alice.threads.get(run.thread_id)).status).toBe('busy');
    writeFileSync(path.join(dir, 'release'), '');
    await gone(run.thread_id);
    // The restarted node took the run up from its checkpoint: the second step ran again.
    expect(log()).toBe('first\nsecond\nsecond\n');
  });
});
