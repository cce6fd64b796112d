// @vitest-environment jsdom
import type { AgentEvent } from '@cognition/client';
import { cleanup, render, screen } from '@testing-library/react';
import { afterEach, describe, expect, it } from 'vitest';
import { RunTimeline } from './run-timeline';
import { newTurn, turnReducer } from './turn-state';

afterEach(cleanup);

/** A run as replayed from the log: `[event, emitted at]`, ids in that order. */
function replayed(events: [AgentEvent, string][]) {
  return events.reduce(
    (turn, [event, at], i) =>
      turnReducer(turn, {
        id: `r1:${String(i + 1).padStart(9, '0')}`,
        sessionId: 's1',
        runId: 'r1',
        at,
        event,
      }),
    newTurn('r1', ''),
  );
}

describe('RunTimeline', () => {
  it('shows a resumed run’s attempts and its downtime from the stored emission times', () => {
    const turn = replayed([
      [{ type: 'status', status: 'thinking' }, '2026-11-20T10:00:00.000Z'],
      [{ type: 'token', content: 'The ans' }, '2026-11-20T10:00:00.500Z'],
      // The process died here; another took the run up 4 s later.
      [
        { type: 'resumed', run_id: 'r1', void_after_event_id: 'r1:000000001', attempt: 1 },
        '2026-11-20T10:00:04.500Z',
      ],
      [{ type: 'token', content: 'The answer.' }, '2026-11-20T10:00:05.000Z'],
      [{ type: 'done', assistant_data: null }, '2026-11-20T10:00:05.500Z'],
    ]);
    render(<RunTimeline turn={turn} now={Date.parse('2026-11-21T00:00:00.000Z')} />);
    expect(screen.getByText(/Run timeline/).textContent).toBe(
      'Run timeline · 5.50 s · 2 attempts (resumed 1× after a crash, 4.00 s down)',
    );
    const rows = screen.getAllByRole('listitem').map((li) => li.textContent);
    expect(rows).toEqual([
      'model call 1500 ms',
      'downtime before attempt 24.00 s',
      'model call 2 (attempt 2)500 ms',
    ]);
  });
});
