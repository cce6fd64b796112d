import type { TestRuntime } from '../testing/test-runtime';
import {
  contentText,
  contextAgent,
  createTestRuntime,
  isSummaryCall,
  sendAndCollect,
  sentTokens,
} from '../testing/test-runtime';
import type { ScriptedCall } from '../testing/scripted-chat-model';
import { ScriptedChatModel } from '../testing/scripted-chat-model';
import { RuntimeError } from '../errors';
import { ContextInspector } from './context-view';
import { tokenCounterFor } from './token-counter';

const FILLER = 'the quick brown fox jumps over the lazy dog and keeps on running';
const counter = tokenCounterFor('openai_compatible', 'fake-model');

describe('context-window view', () => {
  let rt: TestRuntime;
  afterEach(async () => {
    await rt.cleanup();
  });

  it('sums to what the model is sent next, before and after compactions', async () => {
    const model = new ScriptedChatModel();
    const agent = contextAgent({ max_tokens: 1500, keep_last_messages: 4 }, ['ls', 'read_file']);
    rt = await createTestRuntime({ chatModel: model, agents: [agent] });
    const inspector = new ContextInspector({
      storage: rt.storage,
      agents: rt.agents,
      providers: rt.providers,
    });
    const session = await rt.createSession('long', {}, { tenant: 'a' });
    const reply = (call: ScriptedCall) =>
      isSummaryCall(call) ? { text: `summary after ${call.messages.length}` } : { text: FILLER };

    const empty = await inspector.view(session.id, { tenant: 'a' });
    expect(empty).toMatchObject({
      agent: 'long',
      model: 'fake-model',
      strategy: 'summarize',
      tokenizer: 'estimate:chars/3.5',
      window_tokens: null,
      budget_tokens: 1500,
      thread_messages: 0,
      visible_messages: 0,
      summary: null,
      compacted: null,
      will_compact: false,
    });
    expect(empty.parts.tool_schemas).toBeGreaterThan(0);

    let compared = 0;
    let sawSummary = false;
    for (let turn = 1; turn <= 60; turn += 1) {
      const view = await inspector.view(session.id, { tenant: 'a' });
      const { parts } = view;
      expect(parts.total).toBe(
        parts.system_prompt + parts.tool_schemas + parts.summary + parts.messages,
      );
      expect(view.visible_messages + (view.compacted?.message_count ?? 0)).toBe(
        view.thread_messages,
      );
      const before = model.calls.length;
      model.push(reply, reply);
      await sendAndCollect(rt, session, `turn-${turn}: ${FILLER}`);
      const first = model.calls[before];
      if (!first || isSummaryCall(first)) continue;
      // No compaction before this call: it was sent exactly the view plus the new user message.
      expect(view.will_compact).toBe(false);
      const human = first.messages.at(-1);
      expect(sentTokens(first, counter, parts.tool_schemas)).toBe(
        parts.total + (human ? counter.message(human) : 0),
      );
      if (view.summary !== null) {
        sawSummary = true;
        expect(contentText(first.messages[0])).toContain(view.summary);
        expect(view.parts.summary).toBeGreaterThan(0);
      }
      compared += 1;
    }
    expect(sawSummary).toBe(true);
    expect(compared).toBeGreaterThan(40);

    // Another tenant cannot see it: exactly like a missing session.
    await expect(inspector.view(session.id, { tenant: 'b' })).rejects.toMatchObject({
      code: 'SESSION_NOT_FOUND',
    });
    await expect(inspector.view('missing', {})).rejects.toBeInstanceOf(RuntimeError);
  });
});
