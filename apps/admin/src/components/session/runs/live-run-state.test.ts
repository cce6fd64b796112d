import type { AgentEvent, AgentEventEnvelope } from '@cognition/client';
import { describe, expect, it } from 'vitest';
import { answerOf, initialLiveRun, liveRunReducer, toolLinesOf } from './live-run-state';
import type { LiveRunState } from './live-run-state';

let seq = 0;
const envelope = (event: AgentEvent): AgentEventEnvelope => ({
  id: `evt_${String((seq += 1)).padStart(4, '0')}`,
  sessionId: 's1',
  runId: 'r1',
  at: '2026-01-01T00:00:00.000Z',
  event,
});
const fold = (events: AgentEventEnvelope[]): LiveRunState =>
  events.reduce(liveRunReducer, initialLiveRun);

describe('liveRunReducer', () => {
  it('appends tokens in order and records tool calls, results and artifacts', () => {
    const state = fold(
      [
        { type: 'status', status: 'thinking' },
        { type: 'tool_call', id: 'c1', name: 'ls', args: { path: '.' } },
        { type: 'tool_result', tool_call_id: 'c1', output: 'a.txt', exit_code: 0 },
        { type: 'token', content: 'Hello' },
        { type: 'token', content: ', world' },
        {
          type: 'artifact',
          id: 'a1',
          name: 'notes.md',
          artifact_type: 'memory',
          version: 2,
          action: 'updated',
        },
      ].map((e) => envelope(e as AgentEvent)),
    );
    expect(state).toMatchObject({ status: 'thinking', finished: false });
    expect(answerOf(state)).toBe('Hello, world');
    expect(toolLinesOf(state)).toEqual(['→ ls', '← exit 0', '✎ notes.md v2 (updated)']);
  });

  it('drops what a cut-off step streamed after the resumed mark, then takes the redone step', () => {
    const before = envelope({ type: 'token', content: 'The answer ' });
    const voided = envelope({ type: 'token', content: 'is fo' });
    const state = fold([
      before,
      voided,
      envelope({ type: 'resumed', run_id: 'r1', void_after_event_id: before.id, attempt: 1 }),
      envelope({ type: 'token', content: 'is 42.' }),
    ]);
    expect(answerOf(state)).toBe('The answer is 42.');
    expect(state.resumes).toBe(1);
  });

  it('records a context compaction among the tool lines', () => {
    const state = fold([
      envelope({
        type: 'compaction',
        strategy: 'summarize',
        before_tokens: 479,
        after_tokens: 231,
        summarized_messages: 10,
        model: 'gpt-4o-mini',
      }),
    ]);
    expect(toolLinesOf(state)).toEqual([
      '⋯ context compacted: 10 messages summarized (479 → 231 tokens)',
    ]);
  });

  it('ends completed on done, aborted on an ABORTED error, failed with the message otherwise', () => {
    expect(fold([envelope({ type: 'done', assistant_data: null })])).toMatchObject({
      finished: true,
      outcome: 'completed',
    });
    expect(
      fold([envelope({ type: 'error', code: 'ABORTED', message: 'The run was aborted' })]),
    ).toMatchObject({ finished: true, outcome: 'aborted' });
    expect(
      fold([envelope({ type: 'error', code: 'PROVIDER_ERROR', message: 'model down' })]).outcome,
    ).toBe('failed: model down');
  });

  it('shows a run paused for a decision as waiting, with the tools it asks about', () => {
    const state = fold([
      envelope({
        type: 'interrupt',
        run_id: 'r1',
        tool_calls: [{ id: 'c1', name: 'execute', args: { command: 'ls' }, allowed: ['approve'] }],
        allowed: { c1: ['approve'] },
      }),
    ]);
    expect(state).toMatchObject({ finished: true, outcome: 'waiting for a decision' });
    expect(toolLinesOf(state)).toEqual(['⏸ waiting for a decision on execute']);
  });
});
