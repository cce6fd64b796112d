import { langGraphServerForSpec, sdkFailure } from './testing/langgraph-sdk';
import { postgresServerDatabase, sqliteServerDatabase } from './testing/postgres';

/**
 * Delayed runs over the LangGraph API (issue 28, `after_seconds`), with the official SDK against
 * the built server on SQLite and PostgreSQL: the run is `pending` until its time, its join and
 * stream wait for it, it survives a restart (the time is the run row's), it can be cancelled
 * before it starts, and it holds back no other run; bad input is a 422 naming the field, and
 * another tenant's run is not found.
 */
const ALICE = 'e2e-lg-delayed-runs-alice-0123456789';
const BOB = 'e2e-lg-delayed-runs-bob-0123456789';

describe.each([
  ['SQLite', () => sqliteServerDatabase('cognition-e2e-lg-delayed-runs-')],
  ['PostgreSQL', postgresServerDatabase],
])('LangGraph API: delayed runs on %s (issue 28)', (_name, createDatabase) => {
  const lg = langGraphServerForSpec(
    { alice: ALICE, bob: BOB },
    createDatabase,
    'cognition-e2e-lg-delayed-runs-ws-',
  );

  it('keeps a delayed run pending, then runs it; its join waits for it', async () => {
    const thread = await lg.alice.threads.create();
    const run = await lg.alice.runs.create(thread.thread_id, 'echo', {
      input: { text: 'later' },
      afterSeconds: 2,
    });
    expect(run.status).toBe('pending');
    expect((await lg.alice.runs.get(thread.thread_id, run.run_id)).status).toBe('pending');
    expect((await lg.alice.threads.get(thread.thread_id)).status).toBe('busy');
    expect(await sdkFailure(lg.bob.runs.get(thread.thread_id, run.run_id))).toEqual({
      status: 404,
      body: { detail: 'Thread not found' },
    });
    expect(await lg.alice.runs.join(thread.thread_id, run.run_id)).toEqual({
      text: 'echo: later',
    });
    expect((await lg.alice.runs.get(thread.thread_id, run.run_id)).status).toBe('success');
  });

  it('streams and waits for a delayed run, on a thread and stateless', async () => {
    const thread = await lg.alice.threads.create();
    const parts: { event: string; data: unknown }[] = [];
    for await (const part of lg.alice.runs.stream(thread.thread_id, 'echo', {
      input: { text: 'streamed' },
      streamMode: 'values',
      afterSeconds: 1,
    })) {
      parts.push(part);
    }
    expect(parts.map((part) => part.event)).toEqual(['metadata', 'values', 'values']);
    expect(parts.at(-1)?.data).toEqual({ text: 'echo: streamed' });
    expect(
      await lg.alice.runs.wait(null, 'echo', { input: { text: 'stateless' }, afterSeconds: 1 }),
    ).toEqual({ text: 'echo: stateless' });
  });

  it('keeps a delayed run across a restart', async () => {
    const thread = await lg.alice.threads.create();
    const run = await lg.alice.runs.create(thread.thread_id, 'echo', {
      input: { text: 'after the restart' },
      afterSeconds: 5,
    });
    await lg.restart();
    expect(await lg.alice.runs.join(thread.thread_id, run.run_id)).toEqual({
      text: 'echo: after the restart',
    });
    expect((await lg.alice.runs.get(thread.thread_id, run.run_id)).status).toBe('success');
  });

  it('cancels a delayed run before it starts; it holds back no other run', async () => {
    const thread = await lg.alice.threads.create();
    const delayed = await lg.alice.runs.create(thread.thread_id, 'echo', {
      input: { text: 'never' },
      afterSeconds: 600,
    });
    // Sent after it, due at once: it runs while the delayed one waits.
    expect(
      await lg.alice.runs.wait(thread.thread_id, 'echo', {
        input: { text: 'now' },
        multitaskStrategy: 'enqueue',
      }),
    ).toEqual({ text: 'echo: now' });
    expect((await lg.alice.runs.get(thread.thread_id, delayed.run_id)).status).toBe('pending');
    await lg.alice.runs.cancel(thread.thread_id, delayed.run_id);
    expect((await lg.alice.runs.get(thread.thread_id, delayed.run_id)).status).toBe('interrupted');
    await lg.alice.runs.join(thread.thread_id, delayed.run_id);
    expect((await lg.alice.threads.getState(thread.thread_id)).values).toEqual({
      text: 'echo: now',
    });
    const interrupted = await lg.alice.runs.list(thread.thread_id, { status: 'interrupted' });
    expect(interrupted.map((run) => run.run_id)).toEqual([delayed.run_id]);
  });

  it('names after_seconds when it is refused (422)', async () => {
    const thread = await lg.alice.threads.create();
    const negative = await sdkFailure(
      lg.alice.runs.create(thread.thread_id, 'echo', { input: { text: 'x' }, afterSeconds: -1 }),
    );
    expect(negative.status).toBe(422);
    expect(JSON.stringify(negative.body)).toContain('body.after_seconds');
    const chat = await lg.alice.threads.create({ graphId: 'agent:default' });
    const agent = await sdkFailure(
      lg.alice.runs.create(chat.thread_id, 'agent:default', {
        input: { messages: [{ type: 'human', content: 'later' }] },
        afterSeconds: 5,
      }),
    );
    expect(agent.status).toBe(422);
    expect(JSON.stringify(agent.body)).toContain('body.after_seconds');
    expect(await lg.alice.runs.list(chat.thread_id)).toEqual([]);
  });
});
