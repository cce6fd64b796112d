import { describe, expect, it } from 'vitest';
import { initialLiveRun, liveRunReducer } from './live-run-state';
import type { LiveRunState } from './live-run-state';
import type { AgentEvent } from '@cognition/client';

const fold = (events: AgentEvent[]): LiveRunState => events.reduce(liveRunReducer, initialLiveRun);

describe('liveRunReducer', () => {
  it('appends tokens in order and records tool calls and results', () => {
    const state = fold([
      { type: 'status', status: 'thinking' },
      { type: 'tool_call', id: 'c1', name: 'ls', args: { path: '.' } },
      { type: 'tool_result', tool_call_id: 'c1', output: 'a.txt', exit_code: 0 },
      { type: 'token', content: 'Hello' },
      { type: 'token', content: ', world' },
    ]);
    expect(state).toMatchObject({ status: 'thinking', text: 'Hello, world', finished: false });
    expect(state.tools).toEqual(['→ ls', '← exit 0']);
  });

  it('records a context compaction among the tool lines', () => {
    const state = fold([
      {
        type: 'compaction',
        strategy: 'summarize',
        before_tokens: 479,
        after_tokens: 231,
        summarized_messages: 10,
        model: 'gpt-4o-mini',
      },
    ]);
    expect(state.tools).toEqual(['⋯ context compacted: 10 messages summarized (479 → 231 tokens)']);
  });

  it('ends completed on done, aborted on an ABORTED error, failed with the message otherwise', () => {
    expect(fold([{ type: 'done', assistant_data: null }])).toMatchObject({
      finished: true,
      outcome: 'completed',
    });
    expect(
      fold([{ type: 'error', code: 'ABORTED', message: 'The run was aborted' }]),
    ).toMatchObject({
      finished: true,
      outcome: 'aborted',
    });
    expect(fold([{ type: 'error', code: 'PROVIDER_ERROR', message: 'model down' }]).outcome).toBe(
      'failed: model down',
    );
  });
});
