import { createServer } from 'node:http';
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { fakeEmbedding } from '@cognition/storage/testing';
import { Client } from '@langchain/langgraph-sdk';
import { sdkFailure } from './testing/langgraph-sdk';
import { postgresServerDatabase, sqliteServerDatabase } from './testing/postgres';
import type { ServerDatabase } from './testing/postgres';
import type { ServerProcess } from './testing/server-process';
import { startServerProcess, tempWorkspace } from './testing/server-process';

/**
 * The store's semantic search (issue 28, `langgraph.json`'s `store.index`) driven by the official
 * SDK against the built server: items ranked by similarity with `score`, under the namespace
 * prefix, filter and paging; an item put with `index: false` not found by a query; a re-put
 * re-embedded; another tenant's items never; a graph's `config.store.search(ns, { query })` on
 * the same index; the embeddings endpoint down is a 503 naming the cause; a bad `query` a 422.
 * The embeddings come from a fake OpenAI-compatible `/v1/embeddings` in this process.
 */
const ALICE = 'e2e-lg-index-alice-0123456789';
const BOB = 'e2e-lg-index-bob-0123456789';
const DIMS = 256;

/** An OpenAI-compatible `/v1/embeddings` answering `fakeEmbedding`s; `down` drops connections. */
class FakeEmbeddings {
  private constructor(
    private readonly server: Server,
    readonly url: string,
    /** `down`: connections are dropped; `inputs`: every text embedded. */
    readonly state: { down: boolean; inputs: string[] },
  ) {}

  static async start(): Promise<FakeEmbeddings> {
    const state = { down: false, inputs: [] as string[] };
    const server = createServer((req, res) => {
      if (state.down) {
        req.socket.destroy();
        return;
      }
      let body = '';
      req.on('data', (chunk: Buffer) => (body += chunk.toString()));
      req.on('end', () => {
        const { input, model } = JSON.parse(body) as { input: string[]; model: string };
        if (req.url !== '/v1/embeddings' || model !== 'fake-embed') {
          res.writeHead(404).end();
          return;
        }
        state.inputs.push(...input);
        res.setHeader('content-type', 'application/json');
        res.end(
          JSON.stringify({
            data: input.map((text, index) => ({ index, embedding: fakeEmbedding(text, DIMS) })),
          }),
        );
      });
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const { port } = server.address() as AddressInfo;
    return new FakeEmbeddings(server, `http://127.0.0.1:${port}/v1`, state);
  }

  stop(): Promise<void> {
    this.server.closeAllConnections();
    return new Promise((resolve) => this.server.close(() => resolve()));
  }
}

describe.each<[string, () => Promise<ServerDatabase>]>([
  ['SQLite', () => sqliteServerDatabase('cognition-e2e-lg-index-')],
  ['PostgreSQL', () => postgresServerDatabase()],
])('the store semantic search on %s (issue 28)', (_name, createDatabase) => {
  let embeddings: FakeEmbeddings;
  let database: ServerDatabase;
  let workspace: { dir: string; remove(): void };
  let server: ServerProcess;
  let alice: Client;
  let bob: Client;

  beforeAll(async () => {
    embeddings = await FakeEmbeddings.start();
    database = await createDatabase();
    workspace = tempWorkspace('cognition-e2e-lg-index-ws-');
    server = await startServerProcess({
      ...database.env,
      COGNITION_WORKSPACE_ROOT: workspace.dir,
      COGNITION_LANGGRAPH_CONFIG: path.join(__dirname, 'testing/langgraph-index/langgraph.json'),
      COGNITION_SCOPING_ENABLED: 'true',
      COGNITION_SCOPE_KEYS: 'user',
      COGNITION_API_KEYS: `${ALICE}:user=alice,${BOB}:user=bob`,
      // The provider `store.index.embed` names by its kind ("openai_compatible:fake-embed").
      COGNITION_LLM_PROVIDER: 'openai_compatible',
      COGNITION_LLM_MODEL: 'fake-chat',
      COGNITION_OPENAI_COMPATIBLE_BASE_URL: embeddings.url,
    });
    const client = (apiKey: string) =>
      new Client({ apiUrl: server.url, apiKey, callerOptions: { maxRetries: 0 } });
    alice = client(ALICE);
    bob = client(BOB);
  });

  /** A request over plain HTTP as Alice: its status and `detail`. */
  const send = async (method: string, route: string, body: unknown) => {
    const response = await fetch(`${server.url}${route}`, {
      method,
      headers: { 'x-api-key': ALICE, 'content-type': 'application/json' },
      body: JSON.stringify(body),
    });
    const text = await response.text();
    return {
      status: response.status,
      detail: text ? ((JSON.parse(text) as { detail?: string }).detail ?? '') : '',
    };
  };

  afterAll(async () => {
    await server?.stop();
    await database?.drop();
    workspace?.remove();
    await embeddings?.stop();
  });

  it('ranks by similarity with scores, within the prefix, filter, limit and offset', async () => {
    const store = alice.store;
    await store.putItem(['docs', 'a'], 'tea', { text: 'green tea leaves', kind: 'drink' });
    await store.putItem(['docs', 'a'], 'coffee', { text: 'black coffee beans', kind: 'drink' });
    await store.putItem(['docs', 'b'], 'pot', { text: 'a tea pot', kind: 'thing' });
    await store.putItem(['elsewhere'], 'tea', { text: 'green tea leaves', kind: 'drink' });
    const found = await store.searchItems(['docs'], { query: 'green tea' });
    expect(found.items.map((item) => item.key)).toEqual(['tea', 'pot', 'coffee']);
    const scores = found.items.map((item) => (item as { score?: number }).score);
    expect(scores[0]).toBeCloseTo(Math.sqrt(2 / 3), 5);
    expect(scores[1]).toBeCloseTo(1 / Math.sqrt(6), 5);
    expect(scores[2]).toBe(0);
    const drinks = await store.searchItems(['docs'], {
      query: 'green tea',
      filter: { kind: 'drink' },
    });
    expect(drinks.items.map((item) => item.key)).toEqual(['tea', 'coffee']);
    const second = await store.searchItems(['docs'], { query: 'green tea', limit: 1, offset: 1 });
    expect(second.items.map((item) => item.key)).toEqual(['pot']);
    // Only the `text` field is embedded (langgraph.json's fields), once per distinct text.
    expect(embeddings.state.inputs).toContain('green tea leaves');
    expect(embeddings.state.inputs.some((input) => input.includes('drink'))).toBe(false);
  });

  it('does not find an item put with index: false; a re-put re-embeds', async () => {
    const store = alice.store;
    await store.putItem(['mem'], 'hidden', { text: 'secret orchard apples' }, { index: false });
    await store.putItem(['mem'], 'k', { text: 'ripe apples' });
    const apples = await store.searchItems(['mem'], { query: 'orchard apples' });
    expect(apples.items.map((item) => item.key)).toEqual(['k']);
    expect(embeddings.state.inputs).not.toContain('secret orchard apples');
    await store.putItem(['mem'], 'k', { text: 'fresh oranges' });
    const again = await store.searchItems(['mem'], { query: 'ripe apples' });
    expect((again.items[0] as { score?: number }).score).toBe(0);
    const oranges = await store.searchItems(['mem'], { query: 'fresh oranges' });
    expect((oranges.items[0] as { score?: number }).score).toBeCloseTo(1, 5);
    // Still an item: read by key and by a search without a query.
    expect((await store.getItem(['mem'], 'hidden'))?.value).toEqual({
      text: 'secret orchard apples',
    });
    expect((await store.searchItems(['mem'])).items).toHaveLength(2);
  });

  it("never finds another tenant's items", async () => {
    await alice.store.putItem(['diary'], 'a', { text: 'alice likes jasmine tea' });
    await bob.store.putItem(['diary'], 'b', { text: 'bob likes jasmine tea' });
    const bobs = await bob.store.searchItems(['diary'], { query: 'jasmine tea' });
    expect(bobs.items.map((item) => item.key)).toEqual(['b']);
    const all = await bob.store.searchItems([], { query: 'jasmine tea', limit: 100 });
    expect(all.items.map((item) => item.key)).toEqual(['b']);
  });

  it("serves a graph's config.store.search(ns, { query }) from the same index", async () => {
    await alice.store.putItem(['memories'], 'm1', { text: 'the car is parked on level three' });
    await alice.store.putItem(['memories'], 'm2', { text: 'the dentist is on tuesday' });
    await bob.store.putItem(['memories'], 'm3', { text: 'where is the car parked' });
    const thread = await alice.threads.create();
    const answer = (await alice.runs.wait(thread.thread_id, 'recall', {
      input: { text: 'where is the car parked' },
    })) as { found: string | null; score: number | null };
    expect(answer.found).toBe('the car is parked on level three');
    expect(answer.score).toBeGreaterThan(0.5);
  });

  it('answers 503 naming the embeddings endpoint when it is down, and nothing is written', async () => {
    embeddings.state.down = true;
    try {
      const put = await send('PUT', '/store/items', {
        namespace: ['down'],
        key: 'k',
        value: { text: 'anything' },
      });
      expect(put.status).toBe(503);
      expect(put.detail).toMatch(
        new RegExp(
          `^Store index: cannot embed the items written: embeddings endpoint ${embeddings.url}/embeddings \\(provider "openai_compatible", model "fake-embed"\\): unreachable \\(connection closed\\)$`,
        ),
      );
      const search = await send('POST', '/store/items/search', {
        namespace_prefix: ['down'],
        query: 'anything',
      });
      expect(search.status).toBe(503);
      expect(search.detail).toContain('cannot embed the query');
      // The SDK reports it as the HTTP error it is (not as "Unable to connect to LangGraph server").
      const sdk = await sdkFailure(alice.store.searchItems(['down'], { query: 'anything' }));
      expect(sdk.status).toBe(503);
      expect(await alice.store.getItem(['down'], 'k')).toBeNull();
      // Writes and searches that embed nothing do not need the endpoint.
      await alice.store.putItem(['down'], 'plain', { text: 'kept' }, { index: false });
      expect((await alice.store.searchItems(['down'])).items.map((item) => item.key)).toEqual([
        'plain',
      ]);
    } finally {
      embeddings.state.down = false;
    }
    await alice.store.putItem(['down'], 'k', { text: 'anything' });
    expect((await alice.store.searchItems(['down'], { query: 'anything' })).items[0]?.key).toBe(
      'k',
    );
  });

  it('names a bad query (422)', async () => {
    const response = await fetch(`${server.url}/store/items/search`, {
      method: 'POST',
      headers: { 'x-api-key': ALICE, 'content-type': 'application/json' },
      body: JSON.stringify({ namespace_prefix: ['docs'], query: 42 }),
    });
    expect(response.status).toBe(422);
    const body = (await response.json()) as { errors: { path: string }[] };
    expect(body.errors.map((e) => e.path)).toEqual(['body.query']);
    const index = await fetch(`${server.url}/store/items`, {
      method: 'PUT',
      headers: { 'x-api-key': ALICE, 'content-type': 'application/json' },
      body: JSON.stringify({ namespace: ['docs'], key: 'k', value: {}, index: true }),
    });
    expect(index.status).toBe(422);
    expect(
      ((await index.json()) as { errors: { path: string }[] }).errors.map((e) => e.path),
    ).toEqual(['body.index']);
  });
});
