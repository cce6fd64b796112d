import type { ClaimRecord } from './checks';
import { runsExecutedTwice } from './checks';
import type { ModelCall } from './model';

const call = (process: string, kind: ModelCall['kind'], at: number, end: number): ModelCall => ({
  turn: 't1',
  process,
  kind,
  receivedAt: at,
  endedAt: end,
});
const claim = (n: number, ownerNode: string, at: number): ClaimRecord => ({
  turn: 't1',
  claim: n,
  ownerNode,
  at,
});

// The calls of benchmark 16's "two nodes at once 1" (seed 31001): node-3 made the tool call,
// node-1 the answer, then node-3 the answer again.
const calls = [
  call('node-3#1', 'tool', 1000, 1030),
  call('node-1#1', 'answer', 5900, 6300),
  call('node-3#1', 'answer', 13500, 13900),
];

describe('runsExecutedTwice (issue 31, the chaos run)', () => {
  it('without the claims, flags a process calling again after another one', () => {
    const problems: string[] = [];
    expect(runsExecutedTwice(calls, (p) => problems.push(p))).toBe(1);
    expect(problems[0]).toContain('called again after another process took the run over');
  });

  it('accepts a hand-back: node-3 called again under a claim newer than node-1’s', () => {
    const claims = [claim(1, 'node-3', 900), claim(2, 'node-1', 5000), claim(3, 'node-3', 12000)];
    const problems: string[] = [];
    expect(runsExecutedTwice(calls, (p) => problems.push(p), claims)).toBe(0);
    expect(problems).toEqual([]);
  });

  it('flags a call under a claim another node superseded before it arrived', () => {
    const claims = [claim(1, 'node-3', 900), claim(2, 'node-1', 5000)];
    const problems: string[] = [];
    expect(runsExecutedTwice(calls, (p) => problems.push(p), claims)).toBe(1);
    expect(problems[0]).toContain('node-3#1 called under claim 1 after claim 2 (node-1)');
  });

  it('flags a stale call made before the new owner called (which the process rule missed)', () => {
    const early = [call('node-3#1', 'tool', 1000, 1030), call('node-3#1', 'answer', 5500, 5800)];
    const later = [...early, call('node-1#1', 'answer', 7000, 7400)];
    const claims = [claim(1, 'node-3', 900), claim(2, 'node-1', 5000)];
    expect(runsExecutedTwice(later, () => undefined)).toBe(0);
    expect(runsExecutedTwice(later, () => undefined, claims)).toBe(1);
  });

  it('flags calls of two claims at once, and a call without any claim of its node', () => {
    const overlapping = [
      call('node-3#1', 'answer', 1000, 3000),
      call('node-1#1', 'answer', 2500, 2900),
    ];
    const claims = [claim(1, 'node-3', 900), claim(2, 'node-1', 2000)];
    const problems: string[] = [];
    expect(runsExecutedTwice(overlapping, (p) => problems.push(p), claims)).toBe(1);
    const unclaimed = [call('node-2#1', 'tool', 1000, 1100)];
    expect(runsExecutedTwice(unclaimed, (p) => problems.push(p), [claim(1, 'node-3', 900)])).toBe(
      1,
    );
    expect(problems[1]).toContain('node-2#1 called without a claim of the run');
  });
});
