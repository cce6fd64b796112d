import { describe, expect, it } from 'vitest';
import { milliseconds } from './durations';

describe('milliseconds', () => {
  it('rounds a measured latency instead of printing the float (4.479800000000978 ms was shown)', () => {
    expect(milliseconds(4.479800000000978)).toBe('4.5 ms');
    expect(milliseconds(0)).toBe('0.0 ms');
    expect(milliseconds(123.6)).toBe('124 ms');
  });
});
