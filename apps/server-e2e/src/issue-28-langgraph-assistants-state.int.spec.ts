import { langGraphServerForSpec, sdkFailure } from './testing/langgraph-sdk';
import { postgresServerDatabase, sqliteServerDatabase } from './testing/postgres';

/**
 * Stored assistants and thread state of the LangGraph API (issue 28), driven by the official
 * SDK's `Client` against the built server on SQLite and PostgreSQL: assistants' create / get /
 * update into versions / getVersions / setLatest / search / count / delete, an assistant's
 * config and context in its graph's runs; a graph thread's state update (`asNode`), state at a
 * checkpoint, history, copy and prune; stateless runs (`runs.stream(null, …)`,
 * `runs.wait(null, …)`) on a thread deleted after them; tenancy and bad input. One server per
 * database.
 */
const ALICE = 'e2e-lg-assistants-alice-0123456789';
const BOB = 'e2e-lg-assistants-bob-0123456789';

describe.each([
  ['SQLite', () => sqliteServerDatabase('cognition-e2e-lg-assistants-')],
  ['PostgreSQL', postgresServerDatabase],
])(
  'LangGraph API: stored assistants and thread state on %s (issue 28)',
  (_name, createDatabase) => {
    const lg = langGraphServerForSpec(
      { alice: ALICE, bob: BOB },
      createDatabase,
      'cognition-e2e-lg-assistants-ws-',
    );

    it('creates, reads, patches into versions, sets the latest and deletes an assistant', async () => {
      const created = await lg.alice.assistants.create({
        graphId: 'greeter',
        name: 'Polite greeter',
        description: 'greets politely',
        config: { configurable: { greeting: 'good day' }, tags: ['polite'] },
        context: { mark: '!' },
        metadata: { team: 'ops', level: { n: 1 } },
      });
      expect(created).toMatchObject({
        graph_id: 'greeter',
        name: 'Polite greeter',
        description: 'greets politely',
        config: { configurable: { greeting: 'good day' }, tags: ['polite'] },
        context: { mark: '!' },
        metadata: { team: 'ops', level: { n: 1 } },
        version: 1,
      });
      expect(created.assistant_id).toMatch(/^[0-9a-f-]{36}$/);
      expect(await lg.alice.assistants.get(created.assistant_id)).toEqual(created);

      // A patch is a new version: fields given replace, metadata keys merge in.
      const patched = await lg.alice.assistants.update(created.assistant_id, {
        config: { configurable: { greeting: 'hi' } },
        metadata: { team: 'dev', extra: true },
      });
      expect(patched).toMatchObject({
        version: 2,
        name: 'Polite greeter',
        config: { configurable: { greeting: 'hi' } },
        context: { mark: '!' },
        metadata: { team: 'dev', extra: true, level: { n: 1 } },
      });
      await lg.alice.assistants.update(created.assistant_id, {});
      const versions = await lg.alice.assistants.getVersions(created.assistant_id);
      expect(versions.map((v) => v.version)).toEqual([3, 2, 1]);
      expect(versions[2]).toMatchObject({ config: created.config, metadata: created.metadata });
      expect(
        (await lg.alice.assistants.getVersions(created.assistant_id, { limit: 1, offset: 1 })).map(
          (v) => v.version,
        ),
      ).toEqual([2]);
      expect(
        (
          await lg.alice.assistants.getVersions(created.assistant_id, { metadata: { team: 'ops' } })
        ).map((v) => v.version),
      ).toEqual([1]);

      // Back to version 1 without a new one; the next patch takes 4.
      const back = await lg.alice.assistants.setLatest(created.assistant_id, 1);
      expect(back).toMatchObject({
        version: 1,
        config: created.config,
        metadata: created.metadata,
      });
      expect(await lg.alice.assistants.get(created.assistant_id)).toMatchObject({ version: 1 });
      expect((await lg.alice.assistants.update(created.assistant_id, {})).version).toBe(4);
      expect(await sdkFailure(lg.alice.assistants.setLatest(created.assistant_id, 9))).toEqual({
        status: 404,
        body: { detail: 'Assistant version not found' },
      });

      await lg.alice.assistants.delete(created.assistant_id);
      expect(await sdkFailure(lg.alice.assistants.get(created.assistant_id))).toEqual({
        status: 404,
        body: { detail: 'Assistant not found' },
      });
      expect((await sdkFailure(lg.alice.assistants.getVersions(created.assistant_id))).status).toBe(
        404,
      );
    });

    it("runs a graph with the assistant's config and context under the run's own", async () => {
      const assistant = await lg.alice.assistants.create({
        graphId: 'greeter',
        config: { configurable: { greeting: 'bonjour' } },
        context: { mark: '?' },
      });
      const thread = await lg.alice.threads.create();
      const values = await lg.alice.runs.wait(thread.thread_id, assistant.assistant_id, {
        input: { text: 'Ada' },
      });
      expect(values).toMatchObject({ text: 'bonjour Ada?' });
      // The run's configurable keys win over the assistant's, key by key.
      const second = await lg.alice.runs.wait(thread.thread_id, assistant.assistant_id, {
        input: { text: 'Bob' },
        config: { configurable: { greeting: 'salut' } },
      });
      expect(second).toMatchObject({ text: 'salut Bob?' });
      const runs = await lg.alice.runs.list(thread.thread_id);
      expect(runs.map((r) => r.assistant_id)).toEqual([
        assistant.assistant_id,
        assistant.assistant_id,
      ]);
      // The system assistant of the graph runs it without configuration.
      const plain = await lg.alice.threads.create();
      expect(
        await lg.alice.runs.wait(plain.thread_id, 'greeter', { input: { text: 'Eve' } }),
      ).toMatchObject({
        text: 'hello Eve',
      });
    });

    it('searches and counts stored and system assistants (graph, name, metadata, select, sort)', async () => {
      const a = await lg.alice.assistants.create({
        graphId: 'echo',
        name: 'Search Alpha',
        metadata: { kind: 'searched' },
      });
      const b = await lg.alice.assistants.create({
        graphId: 'echo',
        name: 'search beta',
        metadata: { kind: 'searched' },
      });
      const found = await lg.alice.assistants.search({ metadata: { kind: 'searched' } });
      expect(found.map((x) => x.assistant_id)).toEqual([b.assistant_id, a.assistant_id]);
      expect(await lg.alice.assistants.count({ metadata: { kind: 'searched' } })).toBe(2);
      // Name: a case-insensitive substring.
      expect(await lg.alice.assistants.count({ name: 'SEARCH' })).toBe(2);
      // The graph's system assistant is found with them.
      const echo = await lg.alice.assistants.search({ graphId: 'echo', limit: 100 });
      expect(echo.map((x) => x.assistant_id)).toEqual(
        expect.arrayContaining([a.assistant_id, b.assistant_id]),
      );
      expect(echo.some((x) => x.metadata?.['created_by'] === 'system')).toBe(true);
      const selected = await lg.alice.assistants.search({
        metadata: { kind: 'searched' },
        select: ['assistant_id', 'name'],
        sortBy: 'name',
        sortOrder: 'asc',
      });
      expect(selected).toEqual([
        { assistant_id: a.assistant_id, name: 'Search Alpha' },
        { assistant_id: b.assistant_id, name: 'search beta' },
      ]);
      // if_exists: do_nothing answers the stored one unchanged.
      const again = await lg.alice.assistants.create({
        graphId: 'echo',
        assistantId: a.assistant_id,
        ifExists: 'do_nothing',
        name: 'ignored',
      });
      expect(again).toEqual(await lg.alice.assistants.get(a.assistant_id));
      expect(
        await sdkFailure(
          lg.alice.assistants.create({ graphId: 'echo', assistantId: a.assistant_id }),
        ),
      ).toEqual({ status: 409, body: { detail: 'Assistant already exists' } });
    });

    it("another tenant's assistant is not found, and its id is taken", async () => {
      const mine = await lg.alice.assistants.create({
        graphId: 'echo',
        metadata: { owner: 'alice' },
      });
      const missing = { status: 404, body: { detail: 'Assistant not found' } };
      expect(await sdkFailure(lg.bob.assistants.get(mine.assistant_id))).toEqual(missing);
      expect(await sdkFailure(lg.bob.assistants.update(mine.assistant_id, { name: 'x' }))).toEqual(
        missing,
      );
      expect(await sdkFailure(lg.bob.assistants.getVersions(mine.assistant_id))).toEqual(missing);
      expect(await sdkFailure(lg.bob.assistants.setLatest(mine.assistant_id, 1))).toEqual(missing);
      expect(await sdkFailure(lg.bob.assistants.delete(mine.assistant_id))).toEqual(missing);
      expect(await lg.bob.assistants.count({ metadata: { owner: 'alice' } })).toBe(0);
      const thread = await lg.bob.threads.create();
      expect(
        (
          await sdkFailure(
            lg.bob.runs.wait(thread.thread_id, mine.assistant_id, { input: { text: 'x' } }),
          )
        ).status,
      ).toBe(404);
      expect(
        (
          await sdkFailure(
            lg.bob.assistants.create({ graphId: 'echo', assistantId: mine.assistant_id }),
          )
        ).status,
      ).toBe(409);
      expect(await lg.alice.assistants.get(mine.assistant_id)).toEqual(mine);
    });

    it('deletes the threads naming the assistant with deleteThreads', async () => {
      const assistant = await lg.alice.assistants.create({ graphId: 'echo' });
      const named = await lg.alice.threads.create({
        metadata: { assistant_id: assistant.assistant_id },
      });
      const other = await lg.alice.threads.create({ metadata: { assistant_id: 'someone-else' } });
      await lg.alice.assistants.delete(assistant.assistant_id, { deleteThreads: true });
      expect((await sdkFailure(lg.alice.threads.get(named.thread_id))).status).toBe(404);
      expect(await lg.alice.threads.get(other.thread_id)).toMatchObject({
        thread_id: other.thread_id,
      });
    });

    it('bad input: 422 naming the field, 409 for a system assistant, nothing stored', async () => {
      const before = await lg.alice.assistants.count();
      const unknownGraph = await sdkFailure(lg.alice.assistants.create({ graphId: 'nope' }));
      expect(unknownGraph.status).toBe(422);
      expect(JSON.stringify(unknownGraph.body)).toContain('body.graph_id');
      const badId = await sdkFailure(
        lg.alice.assistants.create({ graphId: 'echo', assistantId: 'not-a-uuid' }),
      );
      expect(badId.status).toBe(422);
      expect(JSON.stringify(badId.body)).toContain('body.assistant_id');
      const badConfig = await sdkFailure(
        lg.alice.assistants.create({ graphId: 'echo', config: 'x' as never }),
      );
      expect(JSON.stringify(badConfig.body)).toContain('body.config');
      expect(await lg.alice.assistants.count()).toBe(before);

      const stored = await lg.alice.assistants.create({ graphId: 'echo' });
      const badPatch = await sdkFailure(
        lg.alice.assistants.update(stored.assistant_id, { graphId: 'nope' }),
      );
      expect(badPatch.status).toBe(422);
      expect(JSON.stringify(badPatch.body)).toContain('body.graph_id');
      const badVersion = await sdkFailure(lg.alice.assistants.setLatest(stored.assistant_id, 0));
      expect(badVersion.status).toBe(422);
      expect(JSON.stringify(badVersion.body)).toContain('body.version');
      expect(await lg.alice.assistants.get(stored.assistant_id)).toEqual(stored);

      // The system assistants are the graphs' own: not changed through this API.
      const system = await sdkFailure(lg.alice.assistants.update('echo', { name: 'mine' }));
      expect(system.status).toBe(409);
      expect(JSON.stringify(system.body)).toContain('system assistant of graph');
      expect((await sdkFailure(lg.alice.assistants.delete('echo'))).status).toBe(409);
      expect(await lg.alice.assistants.getVersions('echo')).toMatchObject([
        { graph_id: 'echo', version: 1 },
      ]);
    });

    type State = { values: Record<string, unknown>; checkpoint: { checkpoint_id: string } };

    it("updates a graph thread's state as a node; reads it at any checkpoint; the next run goes on from it", async () => {
      const thread = await lg.alice.threads.create({ graphId: 'echo' });
      expect(
        await lg.alice.runs.wait(thread.thread_id, 'echo', { input: { text: 'a' } }),
      ).toMatchObject({
        text: 'echo: a',
      });
      const first = (await lg.alice.threads.getState(thread.thread_id)) as unknown as State;
      expect(first.values).toEqual({ text: 'echo: a' });

      // The SDK types this answer as a config; the server (ours and LangGraph's) sends
      // `{checkpoint: {thread_id, checkpoint_ns, checkpoint_id}}`.
      const updated = (await lg.alice.threads.updateState(thread.thread_id, {
        values: { text: 'edited' },
        asNode: 'echo',
      })) as unknown as State;
      const head = (await lg.alice.threads.getState(thread.thread_id)) as unknown as State;
      expect(head.values).toEqual({ text: 'edited' });
      expect(head.checkpoint.checkpoint_id).toBe(updated.checkpoint.checkpoint_id);
      expect(head.checkpoint.checkpoint_id).not.toBe(first.checkpoint.checkpoint_id);

      // The earlier checkpoint, by id (GET) and by checkpoint object (POST).
      const before = first.checkpoint.checkpoint_id;
      expect(await lg.alice.threads.getState(thread.thread_id, before)).toMatchObject({
        values: { text: 'echo: a' },
        checkpoint: { checkpoint_id: before },
      });
      expect(
        await lg.alice.threads.getState(thread.thread_id, {
          thread_id: thread.thread_id,
          checkpoint_id: before,
          checkpoint_ns: '',
          checkpoint_map: null,
        }),
      ).toMatchObject({ values: { text: 'echo: a' } });
      const history = await lg.alice.threads.getHistory(thread.thread_id, { limit: 2 });
      expect(history.map((s) => s.checkpoint.checkpoint_id)).toEqual([
        updated.checkpoint.checkpoint_id,
        before,
      ]);
      expect(history[0]?.metadata).toMatchObject({ source: 'update' });
      const one = await lg.alice.threads.getHistory(thread.thread_id, {
        checkpoint: { checkpoint_id: before },
      });
      expect(one.map((s) => s.checkpoint.checkpoint_id)).toEqual([before]);
      expect(
        await lg.alice.threads.getHistory(thread.thread_id, { metadata: { source: 'update' } }),
      ).toHaveLength(1);

      // A thread created for a graph takes a state before its first run.
      const fresh = await lg.alice.threads.create({ graphId: 'echo' });
      await lg.alice.threads.updateState(fresh.thread_id, {
        values: { text: 'seed' },
        asNode: 'echo',
      });
      expect(await lg.alice.threads.getState(fresh.thread_id)).toMatchObject({
        values: { text: 'seed' },
      });
      expect(
        await lg.alice.runs.wait(fresh.thread_id, 'echo', { input: { text: 'b' } }),
      ).toMatchObject({
        text: 'echo: b',
      });
    });

    it("copies a thread (its metadata and state), prunes threads (the caller's only)", async () => {
      const thread = await lg.alice.threads.create({ graphId: 'echo', metadata: { owner: 'ada' } });
      await lg.alice.runs.wait(thread.thread_id, 'echo', { input: { text: 'c' } });
      const copy = await lg.alice.threads.copy(thread.thread_id);
      expect(copy.thread_id).not.toBe(thread.thread_id);
      expect(copy.metadata).toMatchObject({ owner: 'ada', graph_id: 'echo' });
      expect(await lg.alice.threads.getState(copy.thread_id)).toMatchObject({
        values: { text: 'echo: c' },
      });
      await lg.alice.runs.wait(copy.thread_id, 'echo', { input: { text: 'd' } });
      expect(await lg.alice.threads.getState(thread.thread_id)).toMatchObject({
        values: { text: 'echo: c' },
      });
      expect((await sdkFailure(lg.bob.threads.copy(thread.thread_id))).status).toBe(404);

      expect(await lg.bob.threads.prune([thread.thread_id])).toEqual({ pruned_count: 0 });
      expect(await lg.alice.threads.prune([thread.thread_id, copy.thread_id])).toEqual({
        pruned_count: 2,
      });
      expect((await sdkFailure(lg.alice.threads.get(thread.thread_id))).status).toBe(404);
      expect((await sdkFailure(lg.alice.threads.get(copy.thread_id))).status).toBe(404);
      const bad = await sdkFailure(
        lg.alice.threads.prune([thread.thread_id], { strategy: 'nope' as 'keep_latest' }),
      );
      expect(bad.status).toBe(422);
      expect(JSON.stringify(bad.body)).toContain('body.strategy');
    });

    it('thread state bad input: 404 for unknown checkpoints and threads, 409 for an agent thread, 422 naming the field', async () => {
      const thread = await lg.alice.threads.create({ graphId: 'echo' });
      await lg.alice.runs.wait(thread.thread_id, 'echo', { input: { text: 'e' } });
      const unknownCheckpoint = { status: 404, body: { detail: 'Checkpoint not found' } };
      expect(await sdkFailure(lg.alice.threads.getState(thread.thread_id, 'nope'))).toEqual(
        unknownCheckpoint,
      );
      expect(
        await sdkFailure(
          lg.alice.threads.updateState(thread.thread_id, {
            values: { text: 'x' },
            checkpointId: 'nope',
          }),
        ),
      ).toEqual(unknownCheckpoint);
      const badNode = await sdkFailure(
        lg.alice.threads.updateState(thread.thread_id, {
          values: { text: 'x' },
          asNode: 'nowhere',
        }),
      );
      expect(badNode.status).toBe(422);
      expect(JSON.stringify(badNode.body)).toContain('body.as_node');
      const badValues = await sdkFailure(
        lg.alice.threads.updateState(thread.thread_id, { values: 'text' as never }),
      );
      expect(JSON.stringify(badValues.body)).toContain('body.values');
      expect(
        await sdkFailure(lg.bob.threads.updateState(thread.thread_id, { values: { text: 'x' } })),
      ).toEqual({
        status: 404,
        body: { detail: 'Thread not found' },
      });
      expect((await sdkFailure(lg.bob.threads.getState(thread.thread_id, 'nope'))).status).toBe(
        404,
      );
      expect(await lg.alice.threads.getState(thread.thread_id)).toMatchObject({
        values: { text: 'echo: e' },
      });

      const agentThread = await lg.alice.threads.create({ graphId: 'agent:default' });
      const agent = await sdkFailure(
        lg.alice.threads.updateState(agentThread.thread_id, { values: { messages: [] } }),
      );
      expect(agent.status).toBe(409);
    });

    it('stateless runs: stream and wait on a thread of their own, deleted after the run unless kept', async () => {
      const threadsBefore = await lg.alice.threads.count();
      let created: { run_id: string; thread_id?: string } | undefined;
      const parts: { event: string; data: unknown }[] = [];
      for await (const part of lg.alice.runs.stream(null, 'echo', {
        input: { text: 's' },
        streamMode: ['values', 'updates'],
        onRunCreated: (meta) => {
          created = meta;
        },
      })) {
        parts.push(part);
      }
      expect(parts[0]).toMatchObject({ event: 'metadata', data: { run_id: created?.run_id } });
      expect(parts.map(({ event, data }) => ({ event, data })).slice(1)).toEqual([
        { event: 'values', data: { text: 's' } },
        { event: 'updates', data: { echo: { text: 'echo: s' } } },
        { event: 'values', data: { text: 'echo: s' } },
      ]);
      // on_completion: delete (the default): the thread is gone when the stream ends.
      expect((await sdkFailure(lg.alice.threads.get(created?.thread_id ?? ''))).status).toBe(404);

      const assistant = await lg.alice.assistants.create({
        graphId: 'greeter',
        config: { configurable: { greeting: 'ciao' } },
      });
      expect(
        await lg.alice.runs.wait(null, assistant.assistant_id, { input: { text: 'Ada' } }),
      ).toEqual({ text: 'ciao Ada' });
      expect(await lg.alice.threads.count()).toBe(threadsBefore);

      let kept: { run_id: string; thread_id?: string } | undefined;
      // SDK 1.15 types `onCompletion` out of a stateless call, yet sends it as `on_completion`
      // (LangGraph's field for exactly these runs): the payload is typed loosely here.
      const keep = {
        input: { text: 'k' },
        onCompletion: 'keep',
        onRunCreated: (meta: { run_id: string; thread_id?: string }) => {
          kept = meta;
        },
      } as never;
      expect(await lg.alice.runs.wait(null, 'echo', keep)).toEqual({ text: 'echo: k' });
      expect(await lg.alice.threads.getState(kept?.thread_id ?? '')).toMatchObject({
        values: { text: 'echo: k' },
      });
      expect(await lg.alice.runs.get(kept?.thread_id ?? '', kept?.run_id ?? '')).toMatchObject({
        status: 'success',
      });
      expect((await sdkFailure(lg.bob.threads.get(kept?.thread_id ?? ''))).status).toBe(404);
      expect(await lg.alice.threads.count()).toBe(threadsBefore + 1);
    });

    it('stateless run bad input: 422 naming the field, 404 for an unknown assistant, no thread left', async () => {
      const threadsBefore = await lg.alice.threads.count();
      const unknown = await sdkFailure(lg.alice.runs.wait(null, 'nope', { input: { text: 'x' } }));
      expect(unknown).toEqual({ status: 404, body: { detail: 'Assistant not found' } });
      const badMode = await sdkFailure(
        (async () => {
          for await (const _ of lg.alice.runs.stream(null, 'echo', {
            input: { text: 'x' },
            streamMode: ['values', 'nope' as never],
          })) {
            // nothing is streamed: the request is refused
          }
        })(),
      );
      expect(badMode.status).toBe(422);
      expect(JSON.stringify(badMode.body)).toContain('body.stream_mode.1');
      const badCompletion = await sdkFailure(
        lg.alice.runs.wait(null, 'echo', { input: { text: 'x' }, onCompletion: 'later' } as never),
      );
      expect(JSON.stringify(badCompletion.body)).toContain('body.on_completion');
      expect(await lg.alice.threads.count()).toBe(threadsBefore);
    });
  },
);
