import { describe, expect, it } from 'vitest';
import { interruptSummary } from './registry-lists';

describe('interruptSummary', () => {
  it('lists each tool with the decisions a person may take, or a dash when none', () => {
    expect(interruptSummary({})).toBe('—');
    expect(
      interruptSummary({
        execute: { allowed: ['approve', 'reject'] },
        write_file: { allowed: ['approve', 'edit', 'reject'] },
      }),
    ).toBe('execute (approve/reject), write_file (approve/edit/reject)');
  });
});
