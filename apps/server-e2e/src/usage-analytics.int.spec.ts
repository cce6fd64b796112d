import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { FakeOpenAIServer, createSession, postMessage } from './testing/agent-server';
import { http } from './testing/http';
import type { ServerProcess } from './testing/server-process';
import { startServerProcess, tempWorkspace } from './testing/server-process';

/**
 * The "done when" on the BUILT server (SQLite): a few turns on two models (one priced by
 * COGNITION_PRICES_FILE, one without a price) give correct per-session and per-model usage and
 * cost; stats and cost-by-model answer with filters and buckets; feedback round-trips and shows
 * in QA entries; recall search finds what was said.
 */

type Json = Record<string, unknown>;

let fake: FakeOpenAIServer;
let server: ServerProcess;
const workspace = tempWorkspace();

beforeAll(async () => {
  fake = await FakeOpenAIServer.start();
  const providers = join(workspace.dir, 'providers.yaml');
  writeFileSync(
    providers,
    [
      'providers:',
      '  - id: local',
      '    kind: openai_compatible',
      '    model: fake-model',
      '    models: [fake-large]',
      `    baseUrl: ${fake.baseUrl}`,
      '    maxRetries: 0',
    ].join('\n'),
  );
  const prices = join(workspace.dir, 'prices.json');
  writeFileSync(
    prices,
    JSON.stringify({
      as_of: '2026-11-25',
      prices: { local: { 'fake-large': { input: 2, output: 10, cached_input: 1 } } },
    }),
  );
  server = await startServerProcess({
    COGNITION_WORKSPACE_ROOT: workspace.dir,
    COGNITION_PROVIDERS_FILE: providers,
    COGNITION_PRICES_FILE: prices,
  });
});

afterAll(async () => {
  if (server) expect(await server.stop()).toBe(0);
  await fake.close();
  workspace.remove();
});

async function turn(sessionId: string, content: string): Promise<void> {
  const response = await postMessage(server.url, sessionId, { content });
  expect(response.status).toBe(200);
  const text = await response.text();
  expect(text).toContain('event: done');
}

async function get(path: string): Promise<Json> {
  const res = await http(server.url, 'GET', path);
  expect({ path, status: res.status }).toEqual({ path, status: 200 });
  return res.json ?? {};
}

describe('usage and cost over two models, aggregates, feedback and recall (built server)', () => {
  it('records, aggregates and searches what a few turns did', async () => {
    const large = await createSession(server.url, {
      title: 'Budget review',
      config: { provider_id: 'local', model: 'fake-large' },
      metadata: { team: 'finance' },
    });
    const small = await createSession(server.url, {
      title: 'Chit-chat',
      metadata: { team: 'ops' },
    });
    fake.enqueue(
      {
        text: 'The quarterly budget is balanced.',
        usage: { prompt_tokens: 100_000, completion_tokens: 1_000 },
      },
      {
        text: 'Travel costs rose by a tenth.',
        usage: { prompt_tokens: 200_000, completion_tokens: 2_000 },
      },
      { text: 'Hello there!', usage: { prompt_tokens: 50, completion_tokens: 5 } },
    );
    await turn(large, 'Is the quarterly budget balanced?');
    await turn(large, 'What about travel costs?');
    await turn(small, 'Hi');

    // Per session and per model: 300,000 in × $2/M + 3,000 out × $10/M = $0.63.
    const usage = await get(`/sessions/${large}/usage`);
    expect(usage).toMatchObject({
      usage: {
        tokens_in: 300_000,
        tokens_out: 3_000,
        cost_usd: 0.63,
        cost_complete: true,
        runs: 2,
        last_model: 'fake-large',
        last_provider: 'local',
      },
      models: [
        {
          provider: 'local',
          model: 'fake-large',
          calls: 2,
          tokens_in: 300_000,
          tokens_out: 3_000,
          cost_usd: 0.63,
          cost_complete: true,
        },
      ],
    });
    expect((await get(`/sessions/${small}`)).usage).toMatchObject({
      tokens_in: 50,
      cost_usd: 0,
      cost_complete: false,
    });

    // Aggregates, literal paths, with filters and buckets.
    expect(await get('/sessions/stats')).toMatchObject({
      sessions: { total: 2, by_status: { active: 2 } },
      runs: { total: 3, failed: 0, aborted: 0 },
      tokens_in: 300_050,
      cost_usd: 0.63,
      cost_complete: false,
    });
    const finance = await get('/sessions/stats?metadata.team=finance&bucket=hour');
    expect(finance).toMatchObject({ tokens_in: 300_000, cost_complete: true });
    expect(finance.buckets).toHaveLength(1);
    const models = (await get('/sessions/cost-by-model')).models as Json[];
    expect(models.map((m) => [m.model, m.calls, m.cost_usd, m.cost_complete])).toEqual([
      ['fake-large', 2, 0.63, true],
      ['fake-model', 1, 0, false],
    ]);

    // Feedback round-trips and shows in the QA entries.
    const messages = (await get(`/sessions/${large}/messages?order=asc`)).messages as Json[];
    const answer = messages.filter((m) => m.role === 'assistant')[1] as Json;
    const put = await http(
      server.url,
      'PUT',
      `/sessions/${large}/messages/${String(answer.id)}/feedback`,
      { body: { score: 2, text: 'too vague' } },
    );
    expect(put.status).toBe(200);
    const qa = (await get(`/sessions/${large}/qa?last_n=10`)).entries as Json[];
    expect(qa.map((e) => [e.question, e.answer, e.feedback_score])).toEqual([
      ['What about travel costs?', 'Travel costs rose by a tenth.', 2],
      ['Is the quarterly budget balanced?', 'The quarterly budget is balanced.', null],
    ]);
    expect((await get('/sessions/stats')).feedback).toEqual({ count: 1, average_score: 2 });

    // Recall: what was said, ranked, with its session.
    const found = await get('/messages/search?q=quarterly%20budget');
    expect(found.total).toBe(2);
    for (const hit of found.hits as Json[]) {
      expect(hit).toMatchObject({ session_id: large, session_title: 'Budget review' });
      expect(String(hit.snippet)).toMatch(/\[quarterly\]/i);
    }
    const empty = await http(server.url, 'GET', '/messages/search?q=');
    expect(empty.status).toBe(422);
  });
});
