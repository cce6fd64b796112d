import { ContextOverflowError } from '@langchain/core/errors';
import type { TestRuntime } from '../testing/test-runtime';
import {
  contentText,
  contextAgent,
  createTestRuntime,
  isSummaryCall,
  sendAndCollect,
} from '../testing/test-runtime';
import { ScriptedChatModel } from '../testing/scripted-chat-model';

const FILLER = 'the quick brown fox jumps over the lazy dog and keeps on running';

describe('provider context-length errors and compaction usage', () => {
  let rt: TestRuntime;
  afterEach(async () => {
    await rt.cleanup();
  });

  async function sessionWithTurns(model: ScriptedChatModel, turns: number, strategy = 'summarize') {
    rt = await createTestRuntime({
      chatModel: model,
      agents: [
        contextAgent({
          strategy: strategy as 'summarize',
          max_tokens: 100_000,
          keep_last_messages: 2,
        }),
      ],
    });
    const session = await rt.createSession('long');
    for (let turn = 1; turn <= turns; turn += 1) {
      model.push({ text: `answer-${turn}: ${FILLER}` });
      await sendAndCollect(rt, session, `turn-${turn}: ${FILLER}`);
    }
    return session;
  }

  it('compacts once and retries once after a context-length error', async () => {
    const model = new ScriptedChatModel();
    const session = await sessionWithTurns(model, 6);
    const before = model.calls.length;
    model.push(
      { error: new ContextOverflowError('This model maximum context length is 300 tokens') },
      { text: 'summary of turns' },
      { text: 'fits now' },
    );
    const { events, types } = await sendAndCollect(rt, session, `turn-7: ${FILLER}`);
    expect(types.at(-1)).toBe('done');
    const calls = model.calls.slice(before);
    expect(calls.map(isSummaryCall)).toEqual([false, true, false]);
    const compaction = events.map((e) => e.event).find((e) => e.type === 'compaction');
    expect(compaction).toMatchObject({ strategy: 'summarize', model: 'fake-model' });
    // The retry was sent the summary and fewer messages than the rejected call.
    expect(calls[2]?.messages.length).toBeLessThan(calls[0]?.messages.length ?? 0);
    expect(contentText(calls[2]?.messages[0])).toContain('summary of turns');
  });

  it('fails with CONTEXT_OVERFLOW when the retry is rejected too (no loop)', async () => {
    const model = new ScriptedChatModel();
    const session = await sessionWithTurns(model, 6);
    const before = model.calls.length;
    model.push(
      { error: new ContextOverflowError('too long') },
      { text: 'summary' },
      { error: new ContextOverflowError('still too long') },
      { text: 'never used' },
    );
    const { events } = await sendAndCollect(rt, session, `turn-7: ${FILLER}`);
    expect(events.at(-1)?.event).toMatchObject({ type: 'error', code: 'CONTEXT_OVERFLOW' });
    expect(model.calls.length - before).toBe(3);
    // A context-length error is the request's fault, not an outage: the breaker stays closed.
    expect(rt.runs.breakerSnapshots().every((b) => b.state === 'CLOSED')).toBe(true);
  });

  it('`none` turns a context-length error into CONTEXT_OVERFLOW without retrying', async () => {
    const model = new ScriptedChatModel();
    const session = await sessionWithTurns(model, 2, 'none');
    const before = model.calls.length;
    model.push({ error: new ContextOverflowError('too long') }, { text: 'never used' });
    const { events } = await sendAndCollect(rt, session, 'turn-3');
    expect(events.at(-1)?.event).toMatchObject({ type: 'error', code: 'CONTEXT_OVERFLOW' });
    expect(model.calls.length - before).toBe(1);
  });

  it("counts the summary call's tokens in the run's usage", async () => {
    const model = new ScriptedChatModel();
    rt = await createTestRuntime({
      chatModel: model,
      agents: [contextAgent({ max_tokens: 400, keep_last_messages: 2 })],
    });
    const session = await rt.createSession('long');
    let usage: { input_tokens: number; output_tokens: number } | undefined;
    let runId = '';
    let compacted = false;
    for (let turn = 1; turn <= 20 && !compacted; turn += 1) {
      const reply = (call: Parameters<typeof isSummaryCall>[0]) =>
        isSummaryCall(call)
          ? { text: 'summary', usage: { input_tokens: 1000, output_tokens: 100 } }
          : { text: `answer-${turn}: ${FILLER}`, usage: { input_tokens: 7, output_tokens: 3 } };
      model.push(reply, reply);
      const { events, run } = await sendAndCollect(rt, session, `turn-${turn}: ${FILLER}`);
      compacted = events.some((e) => e.event.type === 'compaction');
      const event = events.map((e) => e.event).find((e) => e.type === 'usage');
      if (event?.type === 'usage') usage = event;
      runId = run.id;
    }
    expect(compacted).toBe(true);
    expect(usage).toMatchObject({ input_tokens: 1007, output_tokens: 103 });
    const runs = await rt.storage.runs.list(session.id);
    expect(runs.find((r) => r.id === runId)?.usage).toMatchObject({
      inputTokens: 1007,
      outputTokens: 103,
    });
  });
});
