import type { AgentEventOf } from '@cognition/contracts';
import { isAIMessage, isToolMessage } from '@langchain/core/messages';
import type { TestRuntime } from '../testing/test-runtime';
import {
  contentText,
  contextAgent,
  createTestRuntime,
  isSummaryCall,
  sendAndCollect,
  sentTokens,
} from '../testing/test-runtime';
import type { ScriptedCall, ScriptedStep } from '../testing/scripted-chat-model';
import { ScriptedChatModel } from '../testing/scripted-chat-model';
import { ToolCatalog } from '../tools/catalog';
import { toolSchemaTokens } from './setup';
import { tokenCounterFor } from './token-counter';

const counter = tokenCounterFor('openai_compatible', 'fake-model');
const FILLER = 'the quick brown fox jumps over the lazy dog and keeps on running';

/** Tags (`turn-7`, `answer-7`) of the messages a text mentions, in order. */
function tags(text: string): string[] {
  return [...text.matchAll(/\b(?:turn|answer)-\d+\b/g)].map((m) => m[0]);
}

function ofType<T extends AgentEventOf<'compaction'>['type']>(
  events: { event: { type: string } }[],
  type: T,
): AgentEventOf<T>[] {
  return events.map((e) => e.event).filter((e): e is AgentEventOf<T> => e.type === type);
}

/** Answers every call: summaries as `summary-v<n>`, turns as `answer-<n>` plus filler. */
function responder(): { entry: (call: ScriptedCall) => ScriptedStep } {
  let summaries = 0;
  const entry = (call: ScriptedCall): ScriptedStep => {
    if (isSummaryCall(call)) {
      summaries += 1;
      return { text: `summary-v${summaries}` };
    }
    const turn = /turn-(\d+)/.exec(contentText(call.messages.at(-1)))?.[1] ?? '?';
    return { text: `answer-${turn}: ${FILLER}` };
  };
  return { entry };
}

describe('context compaction in runs (scripted model)', () => {
  let rt: TestRuntime;
  afterEach(async () => {
    await rt.cleanup();
  });

  it('keeps 200 turns within the budget and summarizes exactly the messages that left the window', async () => {
    const model = new ScriptedChatModel();
    const agent = contextAgent({ max_tokens: 1200, keep_last_messages: 6 });
    rt = await createTestRuntime({ chatModel: model, agents: [agent] });
    const session = await rt.createSession('long');
    const { entry } = responder();
    const compactions: AgentEventOf<'compaction'>[] = [];
    for (let turn = 1; turn <= 200; turn += 1) {
      model.push(entry, entry);
      const { events, types } = await sendAndCollect(rt, session, `turn-${turn}: ${FILLER}`);
      expect(types.at(-1)).toBe('done');
      compactions.push(...ofType(events, 'compaction'));
    }
    const history = await rt.storage.messages.listAll(session.id, {});
    expect(history).toHaveLength(400);
    const positions = new Map(history.map((m, i) => [m.content.split(':')[0], i]));

    let start = 0;
    let previousSummary: string | null = null;
    let pendingSummary: ScriptedCall | null = null;
    for (const call of model.calls) {
      if (isSummaryCall(call)) {
        pendingSummary = call;
        continue;
      }
      expect(sentTokens(call, counter, 0)).toBeLessThanOrEqual(1200);
      const firstVisible = tags(contentText(call.messages[1]))[0] ?? '';
      const newStart = positions.get(firstVisible) ?? -1;
      expect(newStart).toBeGreaterThanOrEqual(start);
      if (newStart > start) {
        // One summary call folded in exactly the messages that left: history[start, newStart).
        expect(pendingSummary).not.toBeNull();
        const request = contentText(pendingSummary?.messages[1]);
        const [previousPart, leavingPart] = request.split('Messages leaving the context window:');
        expect(tags(leavingPart ?? '')).toEqual(
          history.slice(start, newStart).flatMap((m) => tags(m.content.split(':')[0] ?? '')),
        );
        expect(previousPart).toContain(previousSummary ?? '(none yet)');
        previousSummary = /summary-v\d+/.exec(contentText(call.messages[0]))?.[0] ?? null;
        expect(previousSummary).not.toBeNull();
        start = newStart;
      } else {
        expect(pendingSummary).toBeNull();
      }
      pendingSummary = null;
      // The last `keep_last_messages` stay verbatim (the budget leaves room for them here).
      if (start > 0) expect(call.messages.length - 1).toBeGreaterThanOrEqual(6);
    }
    expect(start).toBeGreaterThan(300);
    expect(compactions.length).toBeGreaterThan(10);
    for (const event of compactions) {
      expect(event).toMatchObject({ strategy: 'summarize', model: 'fake-model' });
      expect(event.after_tokens).toBeLessThan(event.before_tokens);
      expect(event.before_tokens).toBeGreaterThan(1200);
    }
    expect(compactions.reduce((sum, e) => sum + e.summarized_messages, 0)).toBe(start);
    // 200 full turns on the memory backend: slow machines need more than the default timeout.
  }, 180_000);

  it('never splits a tool call from its result, and shows oversized results truncated', async () => {
    const big = `${'x'.repeat(30)}\n`.repeat(400);
    const model = new ScriptedChatModel();
    const agent = contextAgent(
      { max_tokens: 1500, keep_last_messages: 2, tool_output_max_tokens: 100 },
      ['execute'],
    );
    rt = await createTestRuntime({
      chatModel: model,
      agents: [agent],
      onExecute: (command) =>
        Promise.resolve({
          output: command === 'big' ? big : `ran ${command}`,
          exitCode: 0,
          truncated: false,
          timedOut: false,
        }),
    });
    const tools = toolSchemaTokens(new ToolCatalog().forAgent(agent, []), counter);
    const session = await rt.createSession('long');
    const { entry } = responder();
    for (let turn = 1; turn <= 30; turn += 1) {
      const command = turn === 3 ? 'big' : `step ${turn}`;
      model.push(
        (call) =>
          isSummaryCall(call)
            ? entry(call)
            : { toolCalls: [{ name: 'execute', args: { command } }] },
        entry,
        entry,
      );
      const { types } = await sendAndCollect(rt, session, `turn-${turn}: ${FILLER}`);
      expect(types.at(-1)).toBe('done');
    }
    let sawTruncated = false;
    for (const call of model.calls.filter((c) => !isSummaryCall(c))) {
      expect(sentTokens(call, counter, tools)).toBeLessThanOrEqual(1500);
      const offered = new Set(
        call.messages.flatMap((m) => (isAIMessage(m) ? (m.tool_calls ?? []).map((c) => c.id) : [])),
      );
      const answered = new Set(call.messages.filter(isToolMessage).map((m) => m.tool_call_id));
      expect([...answered].every((id) => offered.has(id))).toBe(true);
      expect([...offered].every((id) => answered.has(id ?? ''))).toBe(true);
      for (const result of call.messages.filter(isToolMessage)) {
        expect(counter.text(contentText(result))).toBeLessThan(100 + 120);
        if (contentText(result).includes('[Output truncated for the model')) sawTruncated = true;
      }
    }
    expect(sawTruncated).toBe(true);
    const stored = await rt.storage.messages.listAll(session.id, {});
    expect(stored.filter((m) => m.role === 'tool').map((m) => m.content)).toContain(big);
  });

  it('`none` sends the whole thread: no compaction, no truncation', async () => {
    const model = new ScriptedChatModel();
    const agent = contextAgent({ strategy: 'none', max_tokens: 300, tool_output_max_tokens: 32 });
    rt = await createTestRuntime({ chatModel: model, agents: [agent] });
    const session = await rt.createSession('long');
    const { entry } = responder();
    for (let turn = 1; turn <= 12; turn += 1) {
      model.push(entry);
      const { types } = await sendAndCollect(rt, session, `turn-${turn}: ${FILLER}`);
      expect(types).not.toContain('compaction');
    }
    const last = model.calls.at(-1);
    expect(last?.messages).toHaveLength(1 + 23);
    expect(last?.messages[0]?.content).toBe('You are a patient assistant.');
    expect(model.calls.some(isSummaryCall)).toBe(false);
  });

  it('`sliding_window` drops the oldest turns without a summary call', async () => {
    const model = new ScriptedChatModel();
    const agent = contextAgent({
      strategy: 'sliding_window',
      max_tokens: 800,
      keep_last_messages: 4,
    });
    rt = await createTestRuntime({ chatModel: model, agents: [agent] });
    const session = await rt.createSession('long');
    const { entry } = responder();
    const compactions: AgentEventOf<'compaction'>[] = [];
    for (let turn = 1; turn <= 40; turn += 1) {
      model.push(entry);
      const { events } = await sendAndCollect(rt, session, `turn-${turn}: ${FILLER}`);
      compactions.push(...ofType(events, 'compaction'));
    }
    expect(model.calls.some(isSummaryCall)).toBe(false);
    expect(compactions.length).toBeGreaterThan(0);
    expect(compactions.every((e) => e.strategy === 'sliding_window' && e.model === null)).toBe(
      true,
    );
    for (const call of model.calls) {
      expect(sentTokens(call, counter, 0)).toBeLessThanOrEqual(800);
      expect(call.messages[0]?.content).toBe('You are a patient assistant.');
      expect(tags(contentText(call.messages[1]))[0]).toMatch(/^turn-/);
    }
  });
});
