import { describe, expect, it } from 'vitest';
import { usd } from './money';

describe('usd', () => {
  it('shows cents above a dollar, four decimals below, and marks a lower bound', () => {
    expect(usd(12.3456)).toBe('$12.35');
    expect(usd(0.00123)).toBe('$0.0012');
    expect(usd(0.5, false)).toBe('≥ $0.5000');
  });
});
