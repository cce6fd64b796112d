import { langGraphServerForSpec, sdkFailure } from './testing/langgraph-sdk';
import { postgresServerDatabase, sqliteServerDatabase } from './testing/postgres';

/**
 * An assistant's JSON Schemas and subgraphs over the LangGraph API (issue 28), driven by the
 * official SDK's `Client` against the built server on SQLite and PostgreSQL:
 * `assistants.getSchemas` of a zod-state graph (its own schemas), of an `Annotation` graph (its
 * channels) and of an agent (its real state and input); `assistants.getSubgraphs` with
 * `namespace` and `recurse`; `getGraph` with `xray`; tenancy and bad input.
 */
const ALICE = 'e2e-lg-schemas-alice-0123456789';
const BOB = 'e2e-lg-schemas-bob-0123456789';

describe.each([
  ['SQLite', () => sqliteServerDatabase('cognition-e2e-lg-schemas-')],
  ['PostgreSQL', postgresServerDatabase],
])('LangGraph API: assistant schemas and subgraphs on %s (issue 28)', (_name, createDatabase) => {
  const lg = langGraphServerForSpec(
    { alice: ALICE, bob: BOB },
    createDatabase,
    'cognition-e2e-lg-schemas-ws-',
  );

  it("answers a zod-state graph's own JSON Schemas", async () => {
    const schemas = await lg.alice.assistants.getSchemas('nested');
    expect(schemas.graph_id).toBe('nested');
    const topic = { type: 'string', description: 'what to write about' };
    expect(schemas.input_schema).toMatchObject({
      type: 'object',
      properties: { topic, notes: { type: 'array', items: { type: 'string' } } },
    });
    expect(schemas.output_schema).toMatchObject({
      properties: { topic },
      required: ['topic', 'notes'],
    });
    expect(schemas.state_schema).toMatchObject({ properties: { topic } });
    expect(schemas.context_schema).toEqual(schemas.config_schema);
  });

  it("answers an Annotation graph's channels and an agent's real schemas", async () => {
    const echo = await lg.alice.assistants.getSchemas('echo');
    expect(echo).toMatchObject({
      graph_id: 'echo',
      state_schema: { type: 'object', properties: { text: {} } },
      input_schema: { type: 'object', properties: { text: {} } },
      output_schema: { type: 'object', properties: { text: {} } },
      config_schema: null,
    });
    const agent = await lg.alice.assistants.getSchemas('agent:default');
    expect(agent.input_schema).toMatchObject({ required: ['messages'] });
    expect(Object.keys(agent.state_schema?.['properties'] as object)).toEqual(
      expect.arrayContaining(['messages', 'todos']),
    );
    expect(agent.config_schema).toMatchObject({ type: 'object', properties: {} });
  });

  it('lists subgraphs by namespace, with recurse', async () => {
    const all = await lg.alice.assistants.getSubgraphs('nested');
    expect(Object.keys(all)).toEqual(['research']);
    expect(all['research']).toMatchObject({
      state: { properties: { topic: {}, notes: {} } },
    });
    expect(
      Object.keys(await lg.alice.assistants.getSubgraphs('nested', { recurse: true })),
    ).toEqual(['research']);
    expect(
      Object.keys(await lg.alice.assistants.getSubgraphs('nested', { namespace: 'research' })),
    ).toEqual(['research']);
    expect(await lg.alice.assistants.getSubgraphs('nested', { namespace: 'nope' })).toEqual({});
    expect(await lg.alice.assistants.getSubgraphs('echo')).toEqual({});
    expect(await lg.alice.assistants.getSubgraphs('agent:default')).toEqual({});
    // The subgraph runs as part of its graph.
    const thread = await lg.alice.threads.create();
    expect(await lg.alice.runs.wait(thread.thread_id, 'nested', { input: { topic: 'x' } })).toEqual(
      { topic: 'x', notes: ['draft on x', 'done'] },
    );
  });

  it('draws the graph with xray, and refuses bad input and other tenants', async () => {
    const drawn = await lg.alice.assistants.getGraph('nested', { xray: true });
    expect(drawn.nodes.map((n) => n.id)).toEqual(
      expect.arrayContaining(['__start__', 'research', 'finish', '__end__']),
    );
    expect(
      (await lg.alice.assistants.getGraph('nested', { xray: 2 })).nodes.length,
    ).toBeGreaterThan(0);
    const bad = await fetch(`${lg.server.url}/assistants/nested/graph?xray=maybe`, {
      headers: { 'x-api-key': ALICE },
    });
    expect(bad.status).toBe(422);
    expect(JSON.stringify(await bad.json())).toContain('query.xray');
    const recurse = await fetch(`${lg.server.url}/assistants/nested/subgraphs?recurse=yes`, {
      headers: { 'x-api-key': ALICE },
    });
    expect(recurse.status).toBe(422);
    expect(JSON.stringify(await recurse.json())).toContain('query.recurse');

    const own = await lg.alice.assistants.create({ graphId: 'nested' });
    expect((await lg.alice.assistants.getSchemas(own.assistant_id)).graph_id).toBe('nested');
    // One at a time: a rejection must not wait unhandled while the one before is awaited.
    for (const call of [
      () => lg.bob.assistants.getSchemas(own.assistant_id),
      () => lg.bob.assistants.getSubgraphs(own.assistant_id),
      () => lg.alice.assistants.getSchemas('nope'),
    ]) {
      expect(await sdkFailure(call())).toEqual({
        status: 404,
        body: { detail: 'Assistant not found' },
      });
    }
  });
});
