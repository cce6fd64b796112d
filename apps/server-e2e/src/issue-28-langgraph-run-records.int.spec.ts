import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { langGraphServerForSpec, sdkFailure } from './testing/langgraph-sdk';
import { postgresServerDatabase, sqliteServerDatabase } from './testing/postgres';

/**
 * A run's record over the LangGraph API (issue 28), with the official SDK against the built
 * server on SQLite and PostgreSQL: its `metadata` kept and answered (graph and agent runs);
 * `client.runs.delete` — an ended run goes and the thread's state stays, a run still running is
 * a 409 until it ended, another tenant's run is not found.
 */
const ALICE = 'e2e-lg-run-records-alice-0123456789';
const BOB = 'e2e-lg-run-records-bob-0123456789';

async function until(check: () => boolean | Promise<boolean>, what: string): Promise<void> {
  for (let i = 0; i < 600; i += 1) {
    if (await check()) return;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  throw new Error(`timed out waiting for ${what}`);
}

describe.each([
  ['SQLite', () => sqliteServerDatabase('cognition-e2e-lg-run-records-')],
  ['PostgreSQL', postgresServerDatabase],
])('LangGraph API: run metadata and deleting runs on %s (issue 28)', (_name, createDatabase) => {
  const lg = langGraphServerForSpec(
    { alice: ALICE, bob: BOB },
    createDatabase,
    'cognition-e2e-lg-run-records-ws-',
    { echoModel: true },
  );
  let dir: string;
  beforeEach(() => {
    dir = mkdtempSync(path.join(tmpdir(), 'cognition-e2e-lg-run-records-'));
  });
  afterEach(() => {
    rmSync(dir, { recursive: true, force: true });
  });

  it("keeps a run's metadata and answers it, for graph and agent runs", async () => {
    const metadata = { source: 'e2e', n: 2, tags: ['a'], nested: { ok: true } };
    const thread = await lg.alice.threads.create();
    const created = await lg.alice.runs.create(thread.thread_id, 'echo', {
      input: { text: 'm' },
      metadata,
    });
    expect(created.metadata).toEqual(metadata);
    await lg.alice.runs.join(thread.thread_id, created.run_id);
    expect((await lg.alice.runs.get(thread.thread_id, created.run_id)).metadata).toEqual(metadata);
    expect((await lg.alice.runs.list(thread.thread_id))[0]?.metadata).toEqual(metadata);

    const chat = await lg.alice.threads.create({ graphId: 'agent:default' });
    const agentRun = await lg.alice.runs.create(chat.thread_id, 'agent:default', {
      input: { messages: [{ type: 'human', content: 'hi' }] },
      metadata,
    });
    expect(agentRun.metadata).toEqual(metadata);
    await lg.alice.runs.join(chat.thread_id, agentRun.run_id);
    expect((await lg.alice.runs.get(chat.thread_id, agentRun.run_id)).metadata).toEqual(metadata);
    // A run made without metadata has none.
    const plain = await lg.alice.runs.create(chat.thread_id, 'agent:default', {
      input: { messages: [{ type: 'human', content: 'again' }] },
      multitaskStrategy: 'enqueue',
    });
    expect(plain.metadata).toEqual({});
    await lg.alice.runs.join(chat.thread_id, plain.run_id);
    expect((await lg.alice.runs.get(chat.thread_id, plain.run_id)).metadata).toEqual({});
  });

  it('deletes an ended run; the thread keeps its state and graph', async () => {
    const thread = await lg.alice.threads.create();
    const first = await lg.alice.runs.create(thread.thread_id, 'echo', { input: { text: 'a' } });
    await lg.alice.runs.join(thread.thread_id, first.run_id);
    expect(await sdkFailure(lg.bob.runs.delete(thread.thread_id, first.run_id))).toEqual({
      status: 404,
      body: { detail: 'Thread not found' },
    });
    await lg.alice.runs.delete(thread.thread_id, first.run_id);
    expect(await sdkFailure(lg.alice.runs.get(thread.thread_id, first.run_id))).toEqual({
      status: 404,
      body: { detail: 'Run not found' },
    });
    expect(await lg.alice.runs.list(thread.thread_id)).toEqual([]);
    expect(await sdkFailure(lg.alice.runs.delete(thread.thread_id, first.run_id))).toEqual({
      status: 404,
      body: { detail: 'Run not found' },
    });
    // The state the run left stays, still the echo graph's (its history, its next run).
    const state = await lg.alice.threads.getState(thread.thread_id);
    expect(state.values).toEqual({ text: 'echo: a' });
    expect((await lg.alice.threads.get(thread.thread_id)).status).toBe('idle');
    expect(await lg.alice.runs.wait(thread.thread_id, 'echo', { input: { text: 'b' } })).toEqual({
      text: 'echo: b',
    });
    expect((await lg.alice.threads.getHistory(thread.thread_id)).length).toBeGreaterThan(2);
  });

  it('refuses a run that has not ended (409), and deletes it once it has', async () => {
    const thread = await lg.alice.threads.create();
    const run = await lg.alice.runs.create(thread.thread_id, 'steps', { input: { dir } });
    const log = path.join(dir, 'log');
    await until(
      () => existsSync(log) && readFileSync(log, 'utf8').includes('second'),
      'the second step',
    );
    const refused = await sdkFailure(lg.alice.runs.delete(thread.thread_id, run.run_id));
    expect(refused.status).toBe(409);
    expect(JSON.stringify(refused.body)).toContain('cancel it first');
    expect((await lg.alice.runs.get(thread.thread_id, run.run_id)).status).toBe('running');
    writeFileSync(path.join(dir, 'release'), '');
    await lg.alice.runs.join(thread.thread_id, run.run_id);
    expect((await lg.alice.runs.get(thread.thread_id, run.run_id)).status).toBe('success');
    await lg.alice.runs.delete(thread.thread_id, run.run_id);
    expect(await lg.alice.runs.list(thread.thread_id)).toEqual([]);
    expect((await lg.alice.threads.getState(thread.thread_id)).values).toMatchObject({
      done: ['first', 'second'],
    });
  });
});
