import {
  compare,
  formatBytes,
  formatGoal,
  formatMs,
  formatRate,
  percentile,
  summarizeLatencies,
  verdictOf,
} from './stats';

describe('percentile', () => {
  it('interpolates linearly between the closest ranks', () => {
    expect(percentile([4, 1, 3, 2], 50)).toBe(2.5);
    expect(percentile([10, 20, 30, 40, 50], 25)).toBe(20);
    expect(percentile([1, 2], 99)).toBeCloseTo(1.99);
    expect(percentile([7], 99)).toBe(7);
  });

  it('is the minimum at 0 and the maximum at 100, whatever the input order', () => {
    const values = [5, 3, 9, 1, 7];
    expect(percentile(values, 0)).toBe(1);
    expect(percentile(values, 100)).toBe(9);
    expect(values).toEqual([5, 3, 9, 1, 7]);
  });

  it('rejects an empty sample and a percentile outside 0-100', () => {
    expect(() => percentile([], 50)).toThrow(RangeError);
    expect(() => percentile([1], 101)).toThrow('within 0-100');
    expect(() => percentile([1], Number.NaN)).toThrow(RangeError);
  });
});

describe('summarizeLatencies', () => {
  it('reports count, p50, p99, mean, min and max', () => {
    const summary = summarizeLatencies([1, 2, 3, 4, 100]);
    expect(summary).toMatchObject({ samples: 5, p50: 3, mean: 22, min: 1, max: 100 });
    expect(summary.p99).toBeCloseTo(96.16);
  });

  it('refuses an empty sample', () => {
    expect(() => summarizeLatencies([])).toThrow('no latency samples');
  });
});

describe('compare and verdicts', () => {
  it('divides ours by the reference and judges costs with at-most', () => {
    const c = compare(15, 10, 'floor', 'p50 10 ms', { kind: 'at-most', ratio: 1.5 });
    expect(c).toEqual({
      against: 'floor',
      againstFigures: 'p50 10 ms',
      ratio: 1.5,
      goal: { kind: 'at-most', ratio: 1.5 },
      verdict: 'met',
    });
    expect(compare(16, 10, 'floor', '', { kind: 'at-most', ratio: 1.5 }).verdict).toBe('missed');
  });

  it('judges rates with at-least', () => {
    expect(verdictOf(0.7, { kind: 'at-least', ratio: 0.7 })).toBe('met');
    expect(verdictOf(0.69, { kind: 'at-least', ratio: 0.7 })).toBe('missed');
  });

  it('has no verdict without a goal', () => {
    const c = compare(2, 1, 'peer', '');
    expect(c.ratio).toBe(2);
    expect(c).not.toHaveProperty('verdict');
    expect(c).not.toHaveProperty('goal');
  });

  it('refuses figures a ratio would be meaningless for', () => {
    expect(() => compare(1, 0, 'peer', '')).toThrow('reference is 0');
    expect(() => compare(Number.NaN, 1, 'peer', '')).toThrow('ours is NaN');
    expect(() => compare(-1, 1, 'peer', '')).toThrow(RangeError);
  });
});

describe('formatting', () => {
  it('picks a unit with about three significant digits', () => {
    expect(formatMs(0.0123)).toBe('12 µs');
    expect(formatMs(1.234)).toBe('1.23 ms');
    expect(formatMs(12.34)).toBe('12.3 ms');
    expect(formatMs(123.4)).toBe('123 ms');
    expect(formatMs(1234)).toBe('1.23 s');
    expect(formatMs(12345)).toBe('12.3 s');
  });

  it('formats rates, sizes and goals', () => {
    expect(formatRate(12345.6, 'ops/s')).toBe('12,346 ops/s');
    expect(formatRate(5.5, 'ops/s')).toBe('5.50 ops/s');
    expect(formatBytes(30 * 1024)).toBe('30.0 KiB');
    expect(formatGoal({ kind: 'at-most', ratio: 1.2 })).toBe('≤ 1.2×');
    expect(formatGoal({ kind: 'at-least', ratio: 1 })).toBe('≥ 1×');
  });
});
