import type { AgentEvent } from '@cognition/client';
import { describe, expect, it } from 'vitest';
import { answerOfTurn, newTurn, turnReducer } from './turn-state';
import type { TurnState } from './turn-state';

/** Folds `[event, emitted at (epoch ms)]` pairs; ids are `r1:<seq>` in that order. */
const fold = (events: [AgentEvent, number][], from: TurnState = newTurn('r1', 'hi')): TurnState =>
  events.reduce(
    (turn, [event, at], i) =>
      turnReducer(turn, {
        id: `r1:${String(i + 100).padStart(6, '0')}`,
        sessionId: 's1',
        runId: 'r1',
        at: new Date(at).toISOString(),
        event,
      }),
    from,
  );

const spans = (turn: TurnState) =>
  turn.timeline.map((s) => [s.kind, s.label, s.startedAt, s.endedAt, s.attempt]);

describe('turnReducer', () => {
  it('times model calls and tool calls from their emission, with the call’s args and result folded in', () => {
    const turn = fold([
      [{ type: 'status', status: 'thinking' }, 0],
      [{ type: 'tool_call', id: 'c1', name: 'execute', args: { command: 'ls' } }, 40],
      [{ type: 'tool_result', tool_call_id: 'c1', output: 'a.txt', exit_code: 0 }, 100],
      [{ type: 'token', content: 'Done: ' }, 130],
      [{ type: 'token', content: 'a.txt' }, 150],
      [
        {
          type: 'usage',
          input_tokens: 12,
          output_tokens: 3,
          estimated_cost: null,
          provider: 'openai',
          model: 'm',
          estimated: false,
        },
        160,
      ],
      [{ type: 'done', assistant_data: null }, 170],
    ]);
    expect(spans(turn)).toEqual([
      ['model', 'model call 1', 0, 40, 0],
      ['tool', 'sandbox exec (execute)', 40, 100, 0],
      ['model', 'model call 2', 100, 170, 0],
    ]);
    expect(turn.tools['c1']).toEqual({
      id: 'c1',
      name: 'execute',
      args: { command: 'ls' },
      output: 'a.txt',
      exitCode: 0,
    });
    expect(answerOfTurn(turn)).toBe('Done: a.txt');
    expect(turn).toMatchObject({ outcome: 'completed', usage: { input_tokens: 12 } });
  });

  it('marks the wait for a decision until the run goes on, the held call after it', () => {
    const paused = fold([
      [{ type: 'status', status: 'thinking' }, 0],
      [{ type: 'tool_call', id: 'c1', name: 'ls', args: {} }, 20],
      [
        {
          type: 'interrupt',
          run_id: 'r1',
          tool_calls: [
            { id: 'c1', name: 'execute', args: { command: 'ls' }, allowed: ['approve'] },
          ],
          allowed: { c1: ['approve'] },
        },
        20,
      ],
    ]);
    expect(paused.outcome).toBe('waiting for a decision');
    expect(paused.interrupt?.event.tool_calls[0]?.name).toBe('execute');
    const resumed = fold(
      [
        [{ type: 'reconnected', last_event_id: 'r1:000101', truncated: false }, 480],
        [{ type: 'status', status: 'thinking' }, 500],
        [{ type: 'tool_call', id: 'c1', name: 'ls', args: { path: 'edited' } }, 510],
        [{ type: 'tool_result', tool_call_id: 'c1', output: '', exit_code: 0 }, 530],
      ],
      paused,
    );
    expect(resumed).toMatchObject({ interrupt: null, outcome: null });
    // The `reconnected` of the page's new stream (480) is not when the run went on (500).
    // An edit announces the call again: one call with the new arguments, one span.
    expect(resumed.pieces).toHaveLength(1);
    expect(resumed.tools['c1']?.args).toEqual({ path: 'edited' });
    expect(spans(resumed)).toEqual([
      ['model', 'model call 1', 0, 20, 0],
      ['decision', 'waiting for a decision', 20, 500, 0],
      ['tool', 'ls', 500, 530, 0],
      ['model', 'model call 2', 530, null, 0],
    ]);
    // Aborted while paused: the held call never ran, so it leaves the timeline.
    const aborted = fold(
      [
        [{ type: 'reconnected', last_event_id: 'r1:000101', truncated: false }, 880],
        [{ type: 'status', status: 'idle' }, 890],
        [{ type: 'error', code: 'ABORTED', message: 'aborted' }, 900],
      ],
      paused,
    );
    expect(spans(aborted)).toEqual([
      ['model', 'model call 1', 0, 20, 0],
      ['decision', 'waiting for a decision', 20, 890, 0],
    ]);
  });

  it('drops what a cut-off step streamed and marks the downtime before the resumed attempt', () => {
    const turn = fold([
      [{ type: 'status', status: 'thinking' }, 0],
      [{ type: 'token', content: 'The answer ' }, 10],
      [{ type: 'token', content: 'is fo' }, 20],
      [{ type: 'resumed', run_id: 'r1', void_after_event_id: 'r1:000101', attempt: 1 }, 3020],
      [{ type: 'token', content: 'is 42.' }, 3030],
      [{ type: 'done', assistant_data: null }, 3040],
    ]);
    expect(answerOfTurn(turn)).toBe('The answer is 42.');
    expect(spans(turn)).toEqual([
      ['model', 'model call 1', 0, 20, 0],
      ['downtime', 'downtime before attempt 2', 20, 3020, 1],
      ['model', 'model call 2', 3030, 3040, 1],
    ]);
    expect(turn.attempt).toBe(1);
  });

  it('lays a past run out by the emission times, however late its events are read', () => {
    const events: [AgentEvent, number][] = [
      [{ type: 'status', status: 'thinking' }, Date.parse('2026-11-20T10:00:00.000Z')],
      [
        { type: 'tool_call', id: 'c1', name: 'ls', args: {} },
        Date.parse('2026-11-20T10:00:01.250Z'),
      ],
      [
        { type: 'tool_result', tool_call_id: 'c1', output: '', exit_code: 0 },
        Date.parse('2026-11-20T10:00:04.000Z'),
      ],
      [{ type: 'done', assistant_data: null }, Date.parse('2026-11-20T10:00:05.000Z')],
    ];
    const durations = fold(events).timeline.map((s) => (s.endedAt ?? NaN) - s.startedAt);
    expect(durations).toEqual([1250, 2750, 1000]);
  });

  it('ends aborted on an ABORTED error and failed with the message otherwise', () => {
    expect(fold([[{ type: 'error', code: 'ABORTED', message: 'aborted' }, 1]]).outcome).toBe(
      'aborted',
    );
    expect(fold([[{ type: 'error', code: 'PROVIDER_ERROR', message: 'down' }, 1]]).outcome).toBe(
      'failed: down',
    );
  });
});
