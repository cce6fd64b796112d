import type { AgentEventEnvelope } from '@cognition/contracts';
import { eventId } from '../ids';
import { formatSseFrame } from './sse';
import { InMemoryEventLog } from './event-log';

const env = (sessionId: string, runId: string, seq: number): AgentEventEnvelope => ({
  id: eventId(runId, seq),
  sessionId,
  runId,
  at: '2026-01-01T00:00:00.000Z',
  event: { type: 'token', content: `t${seq}` },
});

describe('InMemoryEventLog', () => {
  it('replays after a cursor in order and keeps sessions apart', async () => {
    const log = new InMemoryEventLog({ bufferSize: 10 });
    for (let i = 1; i <= 3; i += 1) await log.append(env('s1', 'run_a', i));
    await log.append(env('s2', 'run_b', 1));
    const after = await log.readAfter('s1', eventId('run_a', 1));
    expect(after).toEqual({
      events: [env('s1', 'run_a', 2), env('s1', 'run_a', 3)],
      truncated: false,
    });
    expect((await log.readAfter('s2')).events).toHaveLength(1);
    expect(await log.readAfter('unknown')).toEqual({ events: [], truncated: false });
  });

  it('bounds each session and reports when a cursor lost events', async () => {
    const log = new InMemoryEventLog({ bufferSize: 3 });
    for (let i = 1; i <= 5; i += 1) await log.append(env('s', 'run_a', i));
    expect((await log.readAfter('s')).events.map((e) => e.id)).toEqual(
      [3, 4, 5].map((i) => eventId('run_a', i)),
    );
    expect((await log.readAfter('s')).truncated).toBe(true);
    expect((await log.readAfter('s', eventId('run_a', 1))).truncated).toBe(true);
    expect((await log.readAfter('s', eventId('run_a', 2))).truncated).toBe(false);
    expect((await log.readAfter('s', eventId('run_a', 4))).events).toEqual([env('s', 'run_a', 5)]);
  });

  it('delivers appends to subscribers until they unsubscribe, isolating listener errors', async () => {
    const errors: unknown[] = [];
    const log = new InMemoryEventLog({ onListenerError: (e) => errors.push(e) });
    const got: string[] = [];
    log.subscribe('s', () => {
      throw new Error('bad listener');
    });
    const off = log.subscribe('s', (e) => got.push(e.id));
    await log.append(env('s', 'run_a', 1));
    off();
    off();
    await log.append(env('s', 'run_a', 2));
    expect(got).toEqual([eventId('run_a', 1)]);
    expect(errors).toHaveLength(2);
  });

  it('forgets the least recently written session beyond maxSessions, and dropped sessions', async () => {
    const log = new InMemoryEventLog({ maxSessions: 2 });
    await log.append(env('a', 'run_a', 1));
    await log.append(env('b', 'run_b', 1));
    await log.append(env('a', 'run_a', 2));
    await log.append(env('c', 'run_c', 1));
    expect((await log.readAfter('b')).events).toEqual([]);
    expect((await log.readAfter('a')).events).toHaveLength(2);
    await log.dropSession('a');
    expect((await log.readAfter('a')).events).toEqual([]);
  });

  it('rejects a non-positive buffer size', () => {
    expect(() => new InMemoryEventLog({ bufferSize: 0 })).toThrow(RangeError);
  });
});

describe('formatSseFrame', () => {
  it('writes id, event type and the snake_case payload without the discriminator, with `at`', () => {
    const frame = formatSseFrame({
      id: 'run_a:000000007',
      sessionId: 's',
      runId: 'run_a',
      at: '2026-01-01T00:00:00.000Z',
      event: { type: 'tool_result', tool_call_id: 'c1', output: 'line1\nline2', exit_code: 0 },
    });
    expect(frame).toBe(
      'id: run_a:000000007\nevent: tool_result\ndata: {"tool_call_id":"c1","output":"line1\\nline2","exit_code":0,"at":"2026-01-01T00:00:00.000Z"}\n\n',
    );
  });
});
