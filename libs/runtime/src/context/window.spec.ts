import type { BaseMessage } from '@langchain/core/messages';
import { AIMessage, HumanMessage, ToolMessage } from '@langchain/core/messages';
import { parseAgentFile } from '../agents/load-agents';
import { RuntimeError } from '../errors';
import { ProviderRegistry } from '../providers/registry';
import { FAKE_PROVIDERS, contentText, thrownBy } from '../testing/test-runtime';
import { resolveContextSettings } from './setup';
import { CHARS_PER_TOKEN_ESTIMATE, tokenCounterFor } from './token-counter';
import { coverage, planWindow, shownToModel, windowStart } from './window';

/** user, assistant(tool call), tool result, assistant — per turn, ids `<kind><turn>`. */
function thread(turns: number): BaseMessage[] {
  const out: BaseMessage[] = [];
  for (let t = 0; t < turns; t += 1) {
    out.push(new HumanMessage({ id: `u${t}`, content: `question ${t}` }));
    out.push(
      new AIMessage({
        id: `c${t}`,
        content: '',
        tool_calls: [{ id: `call${t}`, name: 'ls', args: {}, type: 'tool_call' }],
      }),
    );
    out.push(new ToolMessage({ id: `r${t}`, tool_call_id: `call${t}`, content: 'a b c' }));
    out.push(new AIMessage({ id: `a${t}`, content: `answer ${t}` }));
  }
  return out;
}

describe('window planning', () => {
  const history = thread(10);
  const tokens = history.map(() => 10);

  it('moves the start to a user message, keeping the last messages verbatim', () => {
    const plan = planWindow({
      tokens,
      history,
      from: 0,
      fixedTokens: 50,
      budget: 300,
      keepLastMessages: 4,
    });
    // target 180: 50 + 10 * 13 fits at 27 (not a user message), so the next turn start (28).
    expect(plan).toEqual({ start: 28, messageTokens: 120 });
    expect(history[plan?.start ?? 0]).toBeInstanceOf(HumanMessage);
  });

  it('never starts the window on a tool result, even within a single long turn', () => {
    const long: BaseMessage[] = [new HumanMessage({ id: 'u', content: 'do it' })];
    for (let i = 0; i < 10; i += 1) {
      long.push(
        new AIMessage({
          id: `c${i}`,
          content: '',
          tool_calls: [{ id: `k${i}`, name: 'ls', args: {}, type: 'tool_call' }],
        }),
        new ToolMessage({ id: `r${i}`, tool_call_id: `k${i}`, content: 'out' }),
      );
    }
    const plan = planWindow({
      tokens: long.map(() => 10),
      history: long,
      from: 0,
      fixedTokens: 0,
      budget: 100,
      keepLastMessages: 2,
    });
    expect(plan).not.toBeNull();
    expect(long[plan?.start ?? 0]).toBeInstanceOf(AIMessage);
  });

  it('gives up (null) when not even the last turn fits', () => {
    expect(
      planWindow({ tokens, history, from: 0, fixedTokens: 295, budget: 300, keepLastMessages: 1 }),
    ).toBeNull();
  });

  it('resets the window when the thread no longer starts with the compacted messages', () => {
    const state = { summary: 's', compacted: coverage(history, 8) };
    expect(windowStart(history, state)).toBe(8);
    // Rewound before the compaction point, or forked into a thread with other messages.
    expect(windowStart(history.slice(0, 6), state)).toBe(0);
    expect(windowStart([new HumanMessage({ id: 'other', content: 'x' }), ...history], state)).toBe(
      0,
    );
    expect(windowStart(history, null)).toBe(0);
  });
});

describe('tool output shown to the model', () => {
  const counter = tokenCounterFor('openai_compatible', 'fake-model');

  it('keeps small results and truncates large ones with a note, same id and call id', () => {
    const small = new ToolMessage({ id: 't1', tool_call_id: 'c1', content: 'short' });
    expect(shownToModel(small, 50, counter)).toBe(small);
    const large = new ToolMessage({ id: 't2', tool_call_id: 'c2', content: 'y'.repeat(7000) });
    const shown = shownToModel(large, 100, counter);
    expect(shown).not.toBe(large);
    expect((shown as ToolMessage).tool_call_id).toBe('c2');
    expect(shown.id).toBe('t2');
    expect(contentText(shown)).toContain('[Output truncated for the model');
    expect(contentText(shown)).toContain('read_file with offset and limit');
    expect(counter.text(contentText(shown))).toBeLessThan(100 + 120);
    expect(large.content).toHaveLength(7000);
  });
});

describe('token counting and settings', () => {
  it('counts OpenAI models exactly with tiktoken and estimates others', () => {
    const openai = tokenCounterFor('openai', 'gpt-4o-mini');
    expect(openai.name).toBe('tiktoken:o200k_base');
    expect(openai.text('hello world')).toBe(2);
    expect(tokenCounterFor('openai', 'gpt-4').name).toBe('tiktoken:cl100k_base');
    const other = tokenCounterFor('anthropic', 'claude-sonnet-4');
    expect(other.name).toBe(`estimate:chars/${CHARS_PER_TOKEN_ESTIMATE}`);
    expect(other.text('x'.repeat(35))).toBe(10);
  });

  it('defaults the budget to a share of the known (or configured) window', () => {
    const providers = new ProviderRegistry({
      ...FAKE_PROVIDERS,
      contextWindows: { 'fake-model': 10_000 },
    });
    expect(resolveContextSettings({}, 'gpt-4o-2024-08-06', providers)).toMatchObject({
      strategy: 'summarize',
      window: 128_000,
      budget: 96_000,
      keepLastMessages: 20,
      toolOutputMaxTokens: 4000,
    });
    expect(resolveContextSettings({}, 'fake-model', providers)).toMatchObject({
      window: 10_000,
      budget: 7_500,
    });
    expect(resolveContextSettings({}, 'my-local-llm', providers)).toMatchObject({
      window: null,
      budget: 24_576,
    });
  });

  it('reads `context` from agent files and names bad keys', () => {
    const agent = parseAgentFile(
      '/w/.cognition/agents/long.md',
      '---\ndescription: d\ncontext:\n  strategy: sliding_window\n  max_tokens: 4000\n---\nPrompt',
    );
    expect(agent.context).toMatchObject({ strategy: 'sliding_window', max_tokens: 4000 });
    const error = thrownBy(() =>
      parseAgentFile(
        '/w/.cognition/agents/bad.md',
        '---\ndescription: d\ncontext:\n  strategy: forget\n  keep_last: 3\n---\nPrompt',
      ),
    );
    expect(error).toBeInstanceOf(RuntimeError);
    expect((error as RuntimeError).issues.map((i) => i.path)).toEqual([
      '/w/.cognition/agents/bad.md: context.strategy',
      '/w/.cognition/agents/bad.md: context',
    ]);
  });
});
