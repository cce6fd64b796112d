import { describe, expect, it } from 'vitest';
import { cost, runCost } from './money';

describe('cost', () => {
  it('shows cents above a dollar, four decimals below, and marks a lower bound', () => {
    expect(cost(12.3456)).toBe('$12.35');
    expect(cost(0.00123)).toBe('$0.0012');
    expect(cost(0.5, false)).toBe('≥ $0.5000 (some prices unknown)');
  });

  it('says "unknown price" when nothing was priced, for a run as for a sum', () => {
    expect(cost(0, false)).toBe('unknown price');
    expect(runCost(null)).toBe('unknown price');
    expect(runCost(0)).toBe('$0.0000');
  });
});
