import { randomUUID } from 'node:crypto';
import { langGraphServerForSpec, sdkFailure } from './testing/langgraph-sdk';
import { postgresServerDatabase, sqliteServerDatabase } from './testing/postgres';

/**
 * `POST /threads` with `supersteps` (issue 28): LangGraph's bulk state update at creation, with
 * the official SDK against the built server on SQLite and PostgreSQL. A graph thread made from
 * another thread's steps has that thread's history; an agent's thread is a 409 and an update
 * LangGraph cannot place a 422 naming `body.supersteps`, neither leaving a thread behind.
 */
const ALICE = 'e2e-lg-supersteps-alice-0123456789';
const BOB = 'e2e-lg-supersteps-bob-0123456789';

describe.each([
  ['SQLite', () => sqliteServerDatabase('cognition-e2e-lg-supersteps-')],
  ['PostgreSQL', postgresServerDatabase],
])('LangGraph API: threads made with supersteps on %s (issue 28)', (_name, createDatabase) => {
  const lg = langGraphServerForSpec(
    { alice: ALICE, bob: BOB },
    createDatabase,
    'cognition-e2e-lg-supersteps-ws-',
  );

  it("makes a graph thread with another thread's history, one checkpoint per superstep", async () => {
    const source = await lg.alice.threads.create({ graphId: 'chain' });
    const updates: { event: string; data: unknown }[] = [];
    for await (const part of lg.alice.runs.stream(source.thread_id, 'chain', {
      input: { text: 'x' },
      streamMode: 'updates',
    })) {
      if (part.event === 'updates') updates.push(part);
    }
    const history = await lg.alice.threads.getHistory(source.thread_id, { limit: 100 });
    const input = history.at(-2)?.values;
    const clone = await lg.alice.threads.create({
      graphId: 'chain',
      supersteps: [
        { updates: [{ asNode: '__input__', values: input }] },
        { updates: [{ asNode: '__start__', values: input }] },
        ...updates.map(({ data }) => ({
          updates: Object.entries(data as Record<string, unknown>).map(([asNode, values]) => ({
            asNode,
            values,
          })),
        })),
      ],
    });
    expect(clone.values).toEqual(history[0]?.values);
    const copied = await lg.alice.threads.getHistory(clone.thread_id, { limit: 100 });
    expect(copied.map(({ next, values }) => ({ next, values }))).toEqual(
      history.map(({ next, values }) => ({ next, values })),
    );
    expect(await sdkFailure(lg.bob.threads.get(clone.thread_id))).toEqual({
      status: 404,
      body: { detail: 'Thread not found' },
    });
    // The thread goes on from there, as its graph's.
    expect(await lg.alice.runs.wait(clone.thread_id, 'chain', { input: { text: 'y' } })).toEqual(
      await lg.alice.runs.wait(source.thread_id, 'chain', { input: { text: 'y' } }),
    );
  });

  it("refuses an agent's thread (409) and an update the graph cannot place (422), making no thread", async () => {
    const agentThread = randomUUID();
    const agent = await sdkFailure(
      lg.alice.threads.create({
        threadId: agentThread,
        graphId: 'agent:default',
        supersteps: [{ updates: [{ asNode: 'model', values: { messages: [] } }] }],
      }),
    );
    expect(agent.status).toBe(409);
    expect(await sdkFailure(lg.alice.threads.get(agentThread))).toMatchObject({ status: 404 });

    const badNode = randomUUID();
    const unknown = await sdkFailure(
      lg.alice.threads.create({
        threadId: badNode,
        graphId: 'chain',
        supersteps: [{ updates: [{ asNode: 'nowhere', values: { text: 'x' } }] }],
      }),
    );
    expect(unknown.status).toBe(422);
    expect(JSON.stringify(unknown.body)).toContain('body.supersteps');
    expect(await sdkFailure(lg.alice.threads.get(badNode))).toMatchObject({ status: 404 });

    const empty = await sdkFailure(
      lg.alice.threads.create({ graphId: 'chain', supersteps: [{ updates: [] }] }),
    );
    expect(empty.status).toBe(422);
    expect(JSON.stringify(empty.body)).toContain('body.supersteps.0.updates');
  });
});
