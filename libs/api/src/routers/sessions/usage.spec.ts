import { EMPTY_SESSION_USAGE, isTerminalEvent } from '@cognition/contracts';
import { describeError, toHttpError } from '../../errors';
import type { ApiTestBed } from '../../testing/test-bed';
import { collect, createApiTestBed, envelopeOf, trpcErrorOf } from '../../testing/test-bed';

const ALICE = { user: 'alice' };
const BOB = { user: 'bob' };

type Caller = ReturnType<ApiTestBed['as']>;

describe('usage, stats, cost by model, feedback and QA (tRPC)', () => {
  let bed: ApiTestBed;

  beforeEach(async () => {
    bed = await createApiTestBed();
  });

  afterEach(async () => {
    await bed.cleanup();
  });

  /** Sends one message and waits for the run's terminal event. */
  async function turn(caller: Caller, sessionId: string, content: string): Promise<void> {
    const sent = await caller.messages.send({ sessionId, content });
    const items = await collect(
      (await caller.runs.events({ sessionId, runId: sent.run.id })) as AsyncIterable<
        readonly [string, never, ...unknown[]]
      >,
    );
    const last = envelopeOf(items[items.length - 1] as never).envelope.event;
    expect(isTerminalEvent(last)).toBe(true);
  }

  it('reports per-session and per-model usage after turns on two models', async () => {
    const alice = bed.as(ALICE);
    const priced = await alice.sessions.create({
      config: { model: 'gpt-4o' },
      metadata: { team: 'a' },
    });
    const unpriced = await alice.sessions.create({ metadata: { team: 'b' } });
    bed.model.push({ text: 'one', usage: { input_tokens: 1000, output_tokens: 100 } });
    await turn(alice, priced.id, 'q1');
    bed.model.push({ text: 'two', usage: { input_tokens: 2000, output_tokens: 200 } });
    await turn(alice, priced.id, 'q2');
    bed.model.push({ text: 'three', usage: { input_tokens: 10, output_tokens: 5 } });
    await turn(alice, unpriced.id, 'q3');

    const report = await alice.sessions.usage({ id: priced.id });
    expect(report.usage).toMatchObject({
      tokensIn: 3000,
      tokensOut: 300,
      costUsd: 0.0105,
      costComplete: true,
      runs: 2,
      errorCount: 0,
      lastModel: 'gpt-4o',
      lastProvider: 'fake',
    });
    expect(report.usage.startedAt).toBeInstanceOf(Date);
    expect(report.usage.endedAt).toBeInstanceOf(Date);
    expect(report.models).toEqual([
      {
        provider: 'fake',
        model: 'gpt-4o',
        calls: 2,
        tokensIn: 3000,
        tokensOut: 300,
        costUsd: 0.0105,
        costComplete: true,
      },
    ]);
    // On the session itself, in get and list.
    expect((await alice.sessions.get({ id: priced.id })).usage).toEqual(report.usage);
    const listed = await alice.sessions.list({});
    expect(listed.sessions.find((s) => s.id === unpriced.id)?.usage).toMatchObject({
      tokensIn: 10,
      costUsd: 0,
      costComplete: false,
    });

    const stats = await alice.sessions.stats({});
    expect(stats).toMatchObject({
      sessions: { total: 2, byStatus: { active: 2, abandoned: 0 } },
      runs: { total: 3, failed: 0, aborted: 0 },
      tokensIn: 3010,
      tokensOut: 305,
      costUsd: 0.0105,
      costComplete: false,
      errorCount: 0,
    });
    const teamA = await alice.sessions.stats({ metadata: { team: 'a' }, bucket: 'day' });
    expect(teamA).toMatchObject({ tokensIn: 3000, costComplete: true });
    expect(teamA.buckets).toHaveLength(1);
    expect(teamA.buckets?.[0]).toMatchObject({ tokensIn: 3000, sessions: { total: 1 } });

    expect(await alice.sessions.costByModel({})).toEqual([
      expect.objectContaining({ model: 'gpt-4o', calls: 2, costUsd: 0.0105, costComplete: true }),
      expect.objectContaining({ model: 'fake-model', calls: 1, costUsd: 0, costComplete: false }),
    ]);
    // Another tenant sees nothing of it.
    const bob = bed.as(BOB);
    expect((await bob.sessions.stats({})).sessions.total).toBe(0);
    expect(await bob.sessions.costByModel({})).toEqual([]);
    const hidden = await trpcErrorOf(bob.sessions.usage({ id: priced.id }));
    expect(toHttpError(hidden).status).toBe(404);
  });

  it('splits one session switching models between turns by model, with the cost of each', async () => {
    const alice = bed.as(ALICE);
    const session = await alice.sessions.create({ config: { model: 'gpt-4o' } });
    bed.model.push({ text: 'priced', usage: { input_tokens: 400_000, output_tokens: 10_000 } });
    await turn(alice, session.id, 'on gpt-4o');
    await alice.sessions.update({ id: session.id, config: { model: 'fake-model' } });
    bed.model.push({ text: 'unpriced', usage: { input_tokens: 50, output_tokens: 5 } });
    await turn(alice, session.id, 'on fake-model');
    bed.model.push({ text: 'no usage reported' });
    await turn(alice, session.id, 'estimated');
    const report = await alice.sessions.usage({ id: session.id });
    expect(report.models).toEqual([
      {
        provider: 'fake',
        model: 'gpt-4o',
        calls: 1,
        tokensIn: 400_000,
        tokensOut: 10_000,
        costUsd: 1.1,
        costComplete: true,
      },
      expect.objectContaining({ model: 'fake-model', calls: 2, costUsd: 0, costComplete: false }),
    ]);
    expect(report.usage).toMatchObject({
      runs: 3,
      costUsd: 1.1,
      costComplete: false,
      lastModel: 'fake-model',
    });
    // The third turn's tokens were estimated: counted, and counted apart.
    expect(report.usage.estimatedTokensIn).toBeGreaterThan(0);
    expect(report.usage.tokensIn).toBe(400_050 + report.usage.estimatedTokensIn);
    const runs = await alice.runs.list({ sessionId: session.id });
    expect(runs.runs.filter((run) => run.usage?.estimated)).toHaveLength(1);
  });

  it('rejects bad aggregate filters with 422 naming the field', async () => {
    const alice = bed.as(ALICE);
    for (const [input, field] of [
      [{ bucket: 'week' }, 'bucket'],
      [{ status: 'sleeping' }, 'status'],
      [{ from: new Date('2026-02-01'), to: new Date('2026-01-01') }, 'to'],
      [{ abandonAfterSeconds: 0 }, 'abandonAfterSeconds'],
      [{ unknown: 1 }, '(root)'],
    ] as const) {
      const error = await trpcErrorOf(alice.sessions.stats(input as never));
      expect(toHttpError(error).status).toBe(422);
      expect(describeError(error).issues?.map((i) => i.path)).toContain(field);
    }
    const error = await trpcErrorOf(alice.sessions.costByModel({ bucket: 'day' } as never));
    expect(toHttpError(error).status).toBe(422);
  });

  it('round-trips feedback on assistant messages and lists completed turns as QA entries', async () => {
    const alice = bed.as(ALICE);
    const session = await alice.sessions.create({});
    bed.model.push({ toolCalls: [{ name: 'ls', args: { path: '.' }, id: 'call-1' }] });
    bed.model.push({ text: 'There are no files.' });
    await turn(alice, session.id, 'What files are here?');
    bed.model.push({ text: 'Hello!' });
    await turn(alice, session.id, 'Hi');

    const qa = await alice.sessions.qa({ sessionId: session.id });
    expect(qa.map((entry) => [entry.question, entry.answer])).toEqual([
      ['Hi', 'Hello!'],
      ['What files are here?', 'There are no files.'],
    ]);
    expect(qa[1]?.context).toHaveLength(1);
    expect(qa[1]?.context[0]?.toolCallId).toBe('call-1');
    expect(qa[0]?.context).toEqual([]);
    expect(await alice.sessions.qa({ sessionId: session.id, lastN: 1 })).toHaveLength(1);

    const answerId = qa[1]?.qaId as string;
    const set = await alice.messages.setFeedback({
      sessionId: session.id,
      messageId: answerId,
      score: 4,
      text: 'useful',
    });
    expect(set).toMatchObject({ score: 4, text: 'useful' });
    expect(await alice.messages.get({ sessionId: session.id, messageId: answerId })).toMatchObject({
      feedback: { score: 4, text: 'useful' },
    });
    const page = await alice.messages.list({ sessionId: session.id });
    expect(page.messages.find((m) => m.id === answerId)?.feedback).toMatchObject({ score: 4 });
    expect(page.messages.find((m) => m.role === 'user')?.feedback).toBeNull();
    expect((await alice.sessions.qa({ sessionId: session.id }))[1]).toMatchObject({
      feedbackScore: 4,
      feedbackText: 'useful',
    });
    expect((await alice.sessions.stats({})).feedback).toEqual({ count: 1, averageScore: 4 });

    const userMessage = page.messages.find((m) => m.role === 'user');
    const notAssistant = await trpcErrorOf(
      alice.messages.setFeedback({
        sessionId: session.id,
        messageId: userMessage?.id as string,
        score: 3,
      }),
    );
    expect(toHttpError(notAssistant).status).toBe(422);
    expect(describeError(notAssistant).issues?.map((i) => i.path)).toEqual(['messageId']);
    const badScore = await trpcErrorOf(
      alice.messages.setFeedback({ sessionId: session.id, messageId: answerId, score: 9 }),
    );
    expect(describeError(badScore).issues?.map((i) => i.path)).toEqual(['score']);
    const missing = await trpcErrorOf(
      alice.messages.setFeedback({ sessionId: session.id, messageId: 'nope', score: 3 }),
    );
    expect(toHttpError(missing).status).toBe(404);
    const otherTenant = await trpcErrorOf(
      bed.as(BOB).messages.setFeedback({ sessionId: session.id, messageId: answerId, score: 1 }),
    );
    expect(toHttpError(otherTenant).status).toBe(404);

    expect(
      await alice.messages.deleteFeedback({ sessionId: session.id, messageId: answerId }),
    ).toEqual({ deleted: true });
    expect(
      await alice.messages.deleteFeedback({ sessionId: session.id, messageId: answerId }),
    ).toEqual({ deleted: false });
    expect(
      (await alice.messages.get({ sessionId: session.id, messageId: answerId })).feedback,
    ).toBeNull();
  });

  it('reads the last QA entries of a long thread from its end, widening the window as needed', async () => {
    const alice = bed.as(ALICE);
    const session = await alice.sessions.create({});
    const add = (role: 'user' | 'assistant' | 'tool', content: string, extra = {}) =>
      bed.storage.messages.create({ sessionId: session.id, role, content, ...extra });
    // 12 turns of 32 messages: more than the first window (200 messages) holds for 10 entries.
    for (let turnNo = 0; turnNo < 12; turnNo += 1) {
      await add('user', `question ${turnNo}`);
      for (let step = 0; step < 15; step += 1) {
        await add('assistant', '', {
          toolCalls: [{ id: `c${turnNo}-${step}`, name: 'ls', args: {} }],
        });
        await add('tool', `result ${turnNo}-${step}`, { toolCallId: `c${turnNo}-${step}` });
      }
      await add('assistant', `answer ${turnNo}`);
    }
    const entries = await alice.sessions.qa({ sessionId: session.id, lastN: 10 });
    expect(entries.map((e) => e.question)).toEqual(
      Array.from({ length: 10 }, (_, i) => `question ${11 - i}`),
    );
    expect(entries.every((e, i) => e.answer === `answer ${11 - i}`)).toBe(true);
    expect(entries[0]?.context).toHaveLength(15);
    expect(entries[0]?.context[0]).toEqual({ toolCallId: 'c11-0', content: 'result 11-0' });
    expect(await alice.sessions.qa({ sessionId: session.id, lastN: 500 })).toHaveLength(12);
  });

  it('gives a session without runs empty usage', async () => {
    const alice = bed.as(ALICE);
    const session = await alice.sessions.create({});
    expect(await alice.sessions.usage({ id: session.id })).toEqual({
      sessionId: session.id,
      usage: EMPTY_SESSION_USAGE,
      models: [],
    });
  });
});
